import { Worker } from 'node:worker_threads';
const url = new URL('./_w.ts', import.meta.url).href;
const api = import.meta.resolve('tsx/esm/api');
const w = new Worker(`import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(url)}); })`, { eval: true, execArgv: [] });
w.on('message', (m) => { console.log('got', m); w.terminate(); });
w.on('error', (e) => console.log('err', e));
