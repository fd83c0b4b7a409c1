import t from 'tap';
import { DomainError, ValidationError } from '../../../../src/domain/errors.ts';
import { type RestartRequest, restartStage } from '../../../../src/domain/ingest/restart-stage.ts';
import { legacyStageName, parseStage, type StageStatus } from '../../../../src/domain/ingest/stages.ts';

// Every way a job starts again, through the one function that decides where.

t.test('POST retry: the recovery stage selection table of the spec, row by row', async (t) => {
  const table: [string, string][] = [
    ['ANALYZE_DUPLICATES', 'ANALYZE_DUPLICATES'],
    ['DETECT_SCHEMA', 'DETECT_SCHEMA'],
    ['VALIDATE_SCHEMA', 'VALIDATE_SCHEMA'],
    ['CREATE_SCHEMA_VERSION', 'VALIDATE_SCHEMA'],
    ['GEOCODE_BATCH', 'GEOCODE_BATCH'],
    ['CREATE_EVENTS', 'GEOCODE_BATCH'],
  ];
  for (const [failed, restart] of table) {
    const stage = restartStage({ kind: 'retry', failedStage: parseStage(failed) });
    t.equal(legacyStageName(stage), restart, `${failed} restarts at ${restart}`);
  }
  t.throws(
    () => restartStage({ kind: 'retry', failedStage: 'completed' }),
    ValidationError,
    'nothing to recover',
  );
  t.throws(
    () => restartStage({ kind: 'retry', failedStage: 'needs-review' }),
    ValidationError,
    'review is approved, not recovered',
  );
});

t.test('the automatic retry restarts the task that failed, not an earlier one', async (t) => {
  t.equal(restartStage({ kind: 'automatic-retry', failedStage: 'create-events' }), 'create-events');
  t.equal(
    restartStage({ kind: 'automatic-retry', failedStage: 'create-schema-version' }),
    'create-schema-version',
  );
});

t.test("an admin's re-queue resumes at the failed task, else at the recovery stage", async (t) => {
  t.equal(restartStage({ kind: 'requeue', failedStage: 'create-events' }), 'create-events');
  t.equal(
    restartStage({ kind: 'requeue', failedStage: undefined }),
    'analyze-duplicates',
    'no failure recorded',
  );
  t.throws(() => restartStage({ kind: 'requeue', failedStage: 'completed' }), ValidationError);
});

t.test('reset goes to the stage asked for, only one of the four the spec allows', async (t) => {
  t.equal(restartStage({ kind: 'reset', requested: 'GEOCODE_BATCH', naming: 'import' }), 'geocode-batch');
  t.equal(restartStage({ kind: 'reset', requested: 'detect-schema', naming: 'ingest' }), 'detect-schema');
  t.throws(
    () => restartStage({ kind: 'reset', requested: 'create-events', naming: 'ingest' }),
    ValidationError,
  );
});

t.test('a revision: approval continues after the review, new settings start over', async (t) => {
  const finished = (...stages: string[]): { stage: string; status: StageStatus }[] => [
    ...stages.map((stage) => ({ stage, status: 'completed' as const })),
    { stage: 'create-events', status: 'pending' },
  ];
  const revise = (over: Partial<Extract<RestartRequest, { kind: 'revise' }>>) =>
    restartStage({
      kind: 'revise',
      jobId: 7,
      jobStage: 'needs-review',
      approved: false,
      configChanged: false,
      failureCode: undefined,
      records: [],
      naming: 'ingest',
      ...over,
    });
  const reviewed = finished('analyze-duplicates', 'detect-schema', 'validate-schema', 'needs-review');
  t.equal(revise({ approved: true, records: reviewed }), 'create-schema-version');
  t.equal(revise({ approved: true, records: [] }), 'create-schema-version', 'no records: after needs-review');
  t.equal(revise({ approved: true, configChanged: true, records: reviewed }), 'analyze-duplicates');
  t.equal(revise({ configChanged: true }), 'analyze-duplicates');
  t.equal(revise({ jobStage: 'failed', approved: true, failureCode: 'SCHEMA_DRIFT' }), 'validate-schema');
  t.equal(revise({ jobStage: 'failed', configChanged: true }), 'analyze-duplicates');
  t.equal(revise({}), null, 'nothing asked, nothing restarts');
  t.equal(revise({ jobStage: 'completed' }), null);
  const refused = t.throws(
    () => revise({ jobStage: 'completed', approved: true }),
    DomainError,
  ) as DomainError;
  t.match(refused, { kind: 'conflict', code: 'NOT_REVISABLE' });
  t.throws(() => revise({ jobStage: 'failed', approved: true, failureCode: 'ECONNREFUSED' }), DomainError);
});
