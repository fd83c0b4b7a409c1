import { Type } from 'typebox';

// The schemas of the auth routes (auth-routes.ts): credentials, and what deleting an account removes.
export const Credentials = Type.Object(
  { email: Type.String({ maxLength: 320 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

const DeletionSummary = Type.Object(
  {
    catalogs: Type.Number({ description: 'Catalogs you own, deleted with everything in them' }),
    datasets: Type.Integer(),
    events: Type.Integer(),
    sessions: Type.Number({ description: 'Live login sessions, ended' }),
  },
  { $id: 'DeletionSummary' },
);

export const authSchemas = [DeletionSummary];
