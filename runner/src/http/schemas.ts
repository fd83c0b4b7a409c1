// TypeBox schemas of every route: requests are validated by Fastify before a handler runs,
// and responses are serialised through them.
import { Type } from 'typebox';

export const ErrorBody = Type.Object({
  error: Type.String(),
  message: Type.Optional(Type.String()),
  details: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
});

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const StringMap = Type.Record(Type.String(), Type.String());

export const RunBody = Type.Object(
  {
    run_id: Type.String({ pattern: UUID }),
    runtime: Type.Union([Type.Literal('python'), Type.Literal('node')]),
    entrypoint: Type.String({ minLength: 1, maxLength: 1024 }),
    output_file: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    code_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    code: Type.Optional(StringMap),
    env: Type.Optional(StringMap),
    limits: Type.Optional(
      Type.Object(
        {
          timeout_secs: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
          memory_mb: Type.Optional(Type.Integer({ minimum: 64, maximum: 4096 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const RunResponse = Type.Object({
  status: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('timeout')]),
  exit_code: Type.Number(),
  duration_ms: Type.Number(),
  stdout: Type.String(),
  stderr: Type.String(),
  output: Type.Optional(
    Type.Object({ rows: Type.Number(), bytes: Type.Number(), content_base64: Type.String() }),
  ),
  error: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  commit: Type.Optional(Type.String({ pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' })),
});

export const RunIdParams = Type.Object({ run_id: Type.String({ pattern: UUID }) });

export const StopResponse = Type.Object({
  run_id: Type.String(),
  stopping: Type.Boolean(),
});

export const StatusResponse = Type.Object({
  run_id: Type.String(),
  active: Type.Boolean(),
  phase: Type.Optional(
    Type.Union([Type.Literal('preparing'), Type.Literal('running'), Type.Literal('collecting')]),
  ),
  started_at: Type.Optional(Type.String()),
  elapsed_ms: Type.Optional(Type.Number()),
  stopping: Type.Optional(Type.Boolean()),
});

export const HealthResponse = Type.Object({
  status: Type.Literal('ok'),
  active_runs: Type.Number(),
  timestamp: Type.String(),
});

export const MetricsResponse = Type.Object({
  active_runs: Type.Number(),
  total_runs: Type.Number(),
  total_success: Type.Number(),
  total_failed: Type.Number(),
  total_timeout: Type.Number(),
  uptime_seconds: Type.Number(),
  queue_capacity: Type.Number(),
});
