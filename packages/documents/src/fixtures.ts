// Test and benchmark fixtures (PDFs, DOCX, images made on the fly). Not for production code.
export * from './pdf/fixtures';
export * from './docs/fixtures';
