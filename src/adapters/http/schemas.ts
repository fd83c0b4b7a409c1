import { Type } from 'typebox';
import { TRUST_LEVELS } from '../../domain/accounts/users.ts';

// Schemas shared by the account, collection and quota routes.

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
    trustLevel: Type.Integer({ minimum: 0, maximum: 5, description: trustLevelDescription() }),
  },
  { $id: 'User' },
);

export const MessageSchema = Type.Object({ message: Type.String() });

export const NoQuery = Type.Object({}, { additionalProperties: false });

function trustLevelDescription(): string {
  return `Trust level: ${Object.entries(TRUST_LEVELS)
    .map(([level, name]) => `${level} ${name}`)
    .join(', ')}`;
}
