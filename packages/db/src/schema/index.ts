export * from './teams';
export * from './scrapes';
