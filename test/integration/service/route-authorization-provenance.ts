import { at, type MatrixRow } from './route-authorization-helpers.ts';

// One event with its provenance, and the provenance page (issue 38 §5): the read rule of the
// event's dataset (private in the fixture), and 404 too when the dataset's owner hides provenance
// (test/integration/read/event-provenance.test.ts).

export const provenanceRows: Record<string, MatrixRow> = {
  'GET /api/v1/events/:id': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule (private here)',
    request: at((fx) => `/api/v1/events/${fx.event}`),
  },
  // A background export's status (issue 36 §1): its requester's only, not even an admin's.
  'GET /api/v1/exports/:id': {
    expect: [404, 404, 200, 404],
    rule: "the requester's only, with the same credential (404 for anyone else, admins and the owner's keys too)",
    keys: [404, 404, 404],
    request: at((fx) => `/api/v1/exports/${fx.viewExport}`),
  },
  'GET /events/:id/provenance': {
    expect: [404, 404, 200, 200],
    rule: "the read rule (private here); 404 when the dataset's owner hides provenance",
    request: at((fx) => `/events/${fx.event}/provenance`),
  },
};
