import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { USER_ONLY } from '../require-user.ts';
import { type LoginDeps, logIn, refreshSession } from '../../../application/accounts/log-in.ts';
import {
  type AccountDeps,
  changeEmail,
  changePassword,
  deleteAccount,
  summariseAccountDeletion,
} from '../../../application/accounts/manage-account.ts';
import { registerAccount } from '../../../application/accounts/register-account.ts';
import { withDefaults } from '../../../domain/site/feature-flags.ts';
import type { TrustLevel } from '../../../domain/accounts/users.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import { clearTokenCookie, requireUser, setTokenCookie } from '../authentication.ts';
import { errorResponses } from '../error-body.ts';
import { MessageSchema, NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import {
  AccountDeleted,
  Credentials,
  CurrentUser,
  DeletionPreview,
  EmailChange,
  LoggedIn,
  PasswordChange,
  PasswordChanged,
  PasswordConfirmation,
  Refreshed,
} from './auth-schemas.ts';

type AuthRouteDeps = {
  login: LoginDeps;
  account: AccountDeps;
  flags: FeatureFlagStore;
  defaultTrustLevel: TrustLevel;
};

const tags = ['accounts'];

export const authRoutes: FastifyPluginAsyncTypebox<AuthRouteDeps> = async (app, deps) => {
  app.post(
    '/api/users/login',
    {
      schema: {
        tags,
        summary: 'Log in',
        description:
          'Answers the token and sets it as the `payload-token` cookie (HttpOnly, SameSite=Lax, Secure over HTTPS). ' +
          'Send it back as the cookie or as `Authorization: Bearer <token>` (or `JWT <token>`). ' +
          'Attempts are rate limited per client IP and email together and per client IP (429 with Retry-After), ' +
          'never per email alone, so wrong guesses from elsewhere cannot lock the owner out.',
        querystring: NoQuery,
        body: Credentials,
        response: {
          200: LoggedIn,
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const result = await logIn(deps.login, { ...request.body, clientIp: request.ip });
      setTokenCookie(request, reply, result.token, result.exp);
      return { message: 'Auth Passed', token: result.token, exp: result.exp, user: result.user };
    },
  );

  app.post(
    '/api/users/logout',
    {
      schema: {
        tags,
        summary: 'Log out',
        description:
          'Revokes the session of the token sent (it stops working at once) and clears the cookie.',
        querystring: NoQuery,
        response: { 200: MessageSchema, ...errorResponses(400) },
      },
    },
    async (request, reply) => {
      if (request.sessionId) await deps.login.sessions.revoke(request.sessionId);
      clearTokenCookie(request, reply);
      return { message: request.sessionId ? 'Logged out successfully.' : 'No session to end.' };
    },
  );

  app.get(
    '/api/users/me',
    {
      schema: {
        tags,
        summary: 'The logged-in user',
        description: "Payload's convention: 200 with `user: null` when the caller is not logged in.",
        querystring: NoQuery,
        response: {
          200: CurrentUser,
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const viewer = viewerOf(request);
      return viewer
        ? { user: viewer, exp: request.tokenExp ?? undefined, collection: 'users' as const }
        : { user: null };
    },
  );

  app.post(
    '/api/users/refresh-token',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Exchange a live token for a fresh one',
        description:
          'Revokes the old session and starts a new one, with a full token lifetime but never past ' +
          'sessionMaxAgeSeconds (config/quotas.yaml, 7 days) from the login: then 401 SESSION_TOO_OLD, log in again.',
        querystring: NoQuery,
        response: {
          200: Refreshed,
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const result = await refreshSession(deps.login, user, request.sessionId ?? '');
      setTokenCookie(request, reply, result.token, result.exp);
      return {
        message: 'Token refresh successful',
        refreshedToken: result.token,
        exp: result.exp,
        user: result.user,
      };
    },
  );

  app.post(
    '/api/auth/register',
    {
      // Each registration costs a password hash: anonymous callers get the per-IP request windows.
      config: { rateLimit: true },
      schema: {
        tags,
        summary: 'Create an account (enumeration-safe)',
        description:
          'Always the same status, body and work whether or not the email is already registered. ' +
          'New accounts start at the default trust level of config/quotas.yaml.',
        querystring: NoQuery,
        body: Credentials,
        response: { 200: MessageSchema, ...errorResponses(400, 403, 429) },
      },
    },
    async (request) => {
      const flags = withDefaults(await deps.flags.read());
      return registerAccount(
        {
          users: deps.account.users,
          passwords: deps.account.passwords,
          defaultTrustLevel: deps.defaultTrustLevel,
          registrationOpen: flags.enableRegistration,
        },
        request.body,
      );
    },
  );

  app.post(
    '/api/users/change-password',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Change your password',
        description:
          'Needs the current password (attempts rate limited per account and per IP: 429). Every other session of ' +
          'the account is revoked.',
        querystring: NoQuery,
        body: PasswordChange,
        response: {
          200: PasswordChanged,
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const user = requireUser(request);
      const { revokedSessions } = await changePassword(deps.account, {
        userId: user.id,
        clientIp: request.ip,
        sessionId: request.sessionId ?? '',
        ...request.body,
      });
      return { message: 'Password changed; other sessions were logged out.', revokedSessions };
    },
  );

  app.post(
    '/api/users/change-email',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Change your email address',
        description:
          'Needs the current password (attempts rate limited per account and per IP: 429). The answer is the same ' +
          'whether or not the address is taken, so it reveals no account; the change is made only when the address is ' +
          'free (GET /api/users/me shows the address in use).',
        querystring: NoQuery,
        body: EmailChange,
        response: { 200: MessageSchema, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const user = requireUser(request);
      await changeEmail(deps.account, {
        userId: user.id,
        clientIp: request.ip,
        password: request.body.password,
        newEmail: request.body.email,
      });
      return { message: 'If no other account uses that address, it is now the address of your account.' };
    },
  );

  app.get(
    '/api/account/deletion-summary',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'What deleting your account would delete',
        querystring: NoQuery,
        response: {
          200: DeletionPreview,
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => {
      const user = requireUser(request);
      const summary = await summariseAccountDeletion(deps.account, user.id);
      return {
        summary,
        message:
          'Deleting the account deletes these catalogs with their datasets and events, and ends these sessions. ' +
          'Confirm with POST /api/users/delete-account {password}.',
      };
    },
  );

  app.post(
    '/api/users/delete-account',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Delete your account',
        description:
          'Needs the password. Deletes the account, the catalogs it owns with their datasets and events, ' +
          'its sessions and quota usage. Read GET /api/account/deletion-summary first.',
        querystring: NoQuery,
        body: PasswordConfirmation,
        response: {
          200: AccountDeleted,
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const user = requireUser(request);
      const deleted = await deleteAccount(deps.account, {
        userId: user.id,
        clientIp: request.ip,
        password: request.body.password,
      });
      clearTokenCookie(request, reply);
      return { message: 'The account has been deleted.', deleted };
    },
  );
};
