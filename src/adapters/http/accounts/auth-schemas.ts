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

export const LoggedIn = Type.Object({
  message: Type.String(),
  token: Type.String(),
  exp: Type.Number({ description: 'Expiry, seconds since the epoch' }),
  user: Type.Ref('User'),
});

export const CurrentUser = Type.Object({
  user: Type.Union([Type.Ref('User'), Type.Null()]),
  exp: Type.Optional(Type.Number()),
  collection: Type.Optional(Type.Literal('users')),
});

export const Refreshed = Type.Object({
  message: Type.String(),
  refreshedToken: Type.String(),
  exp: Type.Number(),
  user: Type.Ref('User'),
});

export const PasswordChange = Type.Object(
  {
    currentPassword: Type.String({ maxLength: 1024 }),
    newPassword: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const PasswordChanged = Type.Object({ message: Type.String(), revokedSessions: Type.Integer() });

export const EmailChange = Type.Object(
  { password: Type.String({ maxLength: 1024 }), email: Type.String({ maxLength: 320 }) },
  { additionalProperties: false },
);

export const DeletionPreview = Type.Object({ summary: Type.Ref('DeletionSummary'), message: Type.String() });

export const PasswordConfirmation = Type.Object(
  { password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

export const AccountDeleted = Type.Object({ message: Type.String(), deleted: Type.Ref('DeletionSummary') });
