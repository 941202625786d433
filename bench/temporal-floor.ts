import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { runConcurrent } from './stats';

/**
 * Temporal's own share of a scrape, measured on the same server in the same run: from the
 * start call to the moment an activity on a second queue begins, with a workflow and an
 * activity that do nothing. A scrape pays this before its fetch activity can run (its answer
 * then comes from Postgres, so the workflow's later tasks are not waited for).
 */
export async function measureTemporalFloor(address: string, n: number): Promise<number[]> {
  const arrived = new Map<string, () => void>();
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already (a second measurement in this process).
  }
  const nc = await NativeConnection.connect({ address });
  const common = { connection: nc, namespace: 'default' };
  const control = await Worker.create({ ...common, taskQueue: 'floor-control', workflowsPath: fileURLToPath(new URL('./temporal-floor.workflow.ts', import.meta.url)) });
  const fetch = await Worker.create({ ...common, taskQueue: 'floor-fetch', activities: { reached: async (id: string) => arrived.get(id)?.() } });
  const running = Promise.all([control.run(), fetch.run()]);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  try {
    const once = async (i: number) => {
      const id = `floor-${Date.now()}-${i}`;
      const reached = new Promise<void>((r) => arrived.set(id, r));
      await client.workflow.start('floorWorkflow', { taskQueue: 'floor-control', workflowId: id, args: [id] });
      await reached;
      arrived.delete(id);
    };
    await runConcurrent(20, 1, once); // warm-up
    return await runConcurrent(n, 1, once);
  } finally {
    control.shutdown();
    fetch.shutdown();
    await running;
    await connection.close();
    await nc.close();
  }
}
