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
