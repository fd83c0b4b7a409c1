import t from 'tap';
import { SCHEDULE_MANAGER_QUEUE, QUEUES } from '../../../../src/adapters/jobs/job-queue.ts';
import { runScheduleManagerTasks } from '../../../../src/adapters/jobs/schedule-manager.ts';

// The one schedule-manager-job shared by scrapers and scheduled imports.

t.test('the schedule-manager-job is defined once among the queues', async (t) => {
  t.equal(QUEUES.filter((queue) => queue.name === SCHEDULE_MANAGER_QUEUE).length, 1);
  t.equal(new Set(QUEUES.map((queue) => queue.name)).size, QUEUES.length, 'no queue defined twice');
});

t.test('every task runs in order, and a failing task does not stop the ones after it', async (t) => {
  const ran: string[] = [];
  const failures: [string, unknown][] = [];
  const boom = new Error('boom');
  await runScheduleManagerTasks(
    [
      { name: 'first', run: async () => ran.push('first') },
      {
        name: 'broken',
        run: async () => {
          ran.push('broken');
          throw boom;
        },
      },
      { name: 'last', run: async () => ran.push('last') },
    ],
    { onTaskError: (task, error) => failures.push([task, error]) },
  );
  t.same(ran, ['first', 'broken', 'last']);
  t.same(failures, [['broken', boom]]);
});

t.test(
  'every stately queue has a heartbeat: a dead worker does not hold its one slot until expiry',
  async (t) => {
    // A stately queue runs one job at a time; a worker SIGKILLed while holding it kept the slot until
    // the job expired (the schedule manager: 300 s without any scheduled run). With heartbeats pg-boss
    // fails or retries it within seconds of the last beat.
    for (const queue of QUEUES.filter((queue) => queue.options?.policy === 'stately'))
      t.ok((queue.options?.heartbeatSeconds ?? 0) >= 10, `${queue.name} has heartbeatSeconds`);
  },
);
