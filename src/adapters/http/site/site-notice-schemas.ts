import { Type } from 'typebox';
import { RecordId } from '../schemas.ts';

// The schemas of the legal notices, the newsletter and the admins' preview redirect (site-notice-routes.ts).

const Text = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);
export const LegalNoticesDoc = Type.Object({
  termsUrl: Text(2048),
  privacyUrl: Text(2048),
  registrationDisclaimer: Text(5000),
  contactEmail: Text(254),
});
export const NewsletterSettingsDoc = Type.Object(
  { serviceUrl: Text(2048) },
  {
    additionalProperties: false,
    description: 'Where subscriptions are POSTed as {"email": ...}; null: none',
  },
);

export const LegalNoticesChange = Type.Partial(LegalNoticesDoc, { additionalProperties: false });

export const NewsletterSubscription = Type.Object(
  { email: Type.String({ maxLength: 254 }) },
  { additionalProperties: false },
);

export const Subscribed = Type.Object({ success: Type.Literal(true), message: Type.String() });

export const PreviewQuery = Type.Object(
  {
    event: Type.Optional(RecordId),
    dataset: Type.Optional(RecordId),
    path: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

export const Redirected = Type.Null();
