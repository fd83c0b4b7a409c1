import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import {
  legacyStageName,
  parseResetStage,
  parseStage,
  STAGE_WEIGHTS,
  stagesFrom,
  TASK_STAGES,
} from '../../../../src/domain/ingest/stages.ts';

t.test('stage names parse in both spellings and nothing else', async (t) => {
  t.equal(parseStage('detect-schema'), 'detect-schema');
  t.equal(parseStage('DETECT_SCHEMA'), 'detect-schema');
  t.equal(parseStage(' geocode_batch '), 'geocode-batch');
  t.throws(() => parseStage('SCHEMA_DETECTION'), ValidationError);
  t.throws(() => parseStage(''), ValidationError);
});

t.test('reset accepts exactly the four stages of the spec', async (t) => {
  for (const stage of ['ANALYZE_DUPLICATES', 'DETECT_SCHEMA', 'VALIDATE_SCHEMA', 'GEOCODE_BATCH']) {
    t.equal(legacyStageName(parseResetStage(stage)), stage);
  }
  for (const stage of ['CREATE_EVENTS', 'CREATE_SCHEMA_VERSION', 'COMPLETED', 'FAILED', 'nonsense']) {
    t.throws(() => parseResetStage(stage), ValidationError, `${stage} is refused`);
  }
});

t.test('stagesFrom lists the stage and every later task in order', async (t) => {
  t.same(stagesFrom('geocode-batch'), ['geocode-batch', 'create-events']);
  t.same(stagesFrom('analyze-duplicates'), [...TASK_STAGES]);
});

t.test('stage weights add up to 100', async (t) => {
  t.equal(
    Object.values(STAGE_WEIGHTS).reduce((a, b) => a + b, 0),
    100,
  );
});
