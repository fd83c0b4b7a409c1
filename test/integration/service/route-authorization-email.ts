import { CSRF, get, type MatrixRow } from './route-authorization-helpers.ts';

// Rows of the route authorization matrix for e-mail (issue 39): the account page of one's own
// addresses, and the token pages, public by token (an unknown token is a 404 for everyone).

const UNKNOWN_TOKEN = 'A'.repeat(43);
const BY_TOKEN = 'public by token: the token in the URL is the authority; unknown token 404';

const form = (url: string): MatrixRow => ({
  expect: [303, 403, 403, 403],
  rule: CSRF,
  request: () => ({ url, payload: {} }),
});

export const emailRows: Record<string, MatrixRow> = {
  'GET /account/email': {
    expect: [303, 200, 200, 200],
    rule: "logged-in users; the caller's own addresses only (anonymous: to the login page)",
    request: get('/account/email'),
  },
  'POST /account/email': form('/account/email'),
  'POST /account/email/resend': form('/account/email/resend'),
  'POST /account/email/remove': form('/account/email/remove'),
  'GET /email/confirm/:token': {
    expect: [404, 404, 404, 404],
    rule: BY_TOKEN,
    request: get(`/email/confirm/${UNKNOWN_TOKEN}`),
  },
  'GET /email/unsubscribe/:token': {
    expect: [404, 404, 404, 404],
    rule: BY_TOKEN,
    request: get(`/email/unsubscribe/${UNKNOWN_TOKEN}`),
  },
  'POST /email/unsubscribe/:token': {
    expect: [404, 404, 404, 404],
    rule: `${BY_TOKEN}; no session or CSRF token (RFC 8058 one-click)`,
    request: () => ({
      url: `/email/unsubscribe/${UNKNOWN_TOKEN}`,
      payload: { 'List-Unsubscribe': 'One-Click' },
    }),
  },
};
