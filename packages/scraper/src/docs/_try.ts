import { parseDocument } from './index';
import { makeDocx } from './fixtures';
import { renderTextPng } from '../pdf/fixtures';
const pdf = { mode: 'auto' as const, pages: false, blocks: false, pageMarkers: false, timeoutMs: 20000 };
const docx = makeDocx([{ heading: 1, text: 'Project Plan' }, { text: 'The plan has three phases.', bold: 'Summary:' }, { heading: 2, text: 'Budget' }, { table: [['Item', 'Cost'], ['Design', '100'], ['Build', '400']] }]);
for (let i = 0; i < 2; i++) { const t0 = Date.now(); const r = await parseDocument(docx, { filename: 'plan.docx', pdf }); console.log(Date.now() - t0, JSON.stringify(r, null, 1)); }
const png = await renderTextPng(['Meeting Notes', 'Agenda for the review']);
const t0 = Date.now(); const r = await parseDocument(png, { pdf: { ...pdf, blocks: true } }); console.log(Date.now() - t0, JSON.stringify(r).slice(0, 800));
console.log(await parseDocument(Buffer.from('<html><head><title>T</title></head><body><h1>Hi</h1><p>para <a href="/x">l</a></p></body></html>'), { pdf }));
console.log(await parseDocument(Buffer.from('# Notes\n\nhello'), { filename: 'a.md', pdf }));
try { await parseDocument(Buffer.from([0, 1, 2, 3, 200, 201, 5, 0, 9]), { pdf }); } catch (e: any) { console.log(e.kind, e.code, e.message); }
