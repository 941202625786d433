import { parentPort } from 'node:worker_threads';
import { other } from './_o';
const x: number = 41;
parentPort!.postMessage(x + other);
