import t from 'tap';
import { DEFAULT_BUDGETS } from '../../../../src/adapters/config/budget-config.ts';
import { ConfigError, loadConfig } from '../../../../src/adapters/config/environment.ts';

t.test('budgets: documented defaults, overridable, bad values named at start-up', async (t) => {
  t.same(loadConfig({ NODE_ENV: 'test' }).budgets, DEFAULT_BUDGETS);
  const set = loadConfig({
    NODE_ENV: 'test',
    READ_STATEMENT_TIMEOUT_MS: '2500',
    COLLECTIONS_STATEMENT_TIMEOUT_MS: '8000',
    JOBS_STATEMENT_TIMEOUT_MS: '120000',
    DATABASE_TIMEOUT_MARGIN_MS: '2000',
    READ_REQUEST_BUDGET_MS: '4000',
    COLLECTIONS_REQUEST_BUDGET_MS: '9000',
    HEADERS_TIMEOUT_MS: '5000',
    REQUEST_TIMEOUT_MS: '60000',
    CONNECTION_TIMEOUT_MS: '15000',
  }).budgets;
  t.same(set, {
    readStatementTimeoutMs: 2500,
    collectionsStatementTimeoutMs: 8000,
    jobsStatementTimeoutMs: 120000,
    databaseTimeoutMarginMs: 2000,
    readRequestBudgetMs: 4000,
    collectionsRequestBudgetMs: 9000,
    headersTimeoutMs: 5000,
    requestTimeoutMs: 60000,
    connectionTimeoutMs: 15000,
  });
  const bad: Array<[string, string]> = [
    ['READ_STATEMENT_TIMEOUT_MS', '0'],
    ['REQUEST_TIMEOUT_MS', '1e9'],
    ['HEADERS_TIMEOUT_MS', 'soon'],
    ['READ_REQUEST_BUDGET_MS', '50'],
    ['COLLECTIONS_REQUEST_BUDGET_MS', '-1'],
    ['DATABASE_TIMEOUT_MARGIN_MS', '99'],
  ];
  for (const [variable, value] of bad) {
    t.throws(() => loadConfig({ NODE_ENV: 'test', [variable]: value }), ConfigError, variable);
    t.throws(() => loadConfig({ NODE_ENV: 'test', [variable]: value }), {
      message: new RegExp(variable),
    });
  }
});
