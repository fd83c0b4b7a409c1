// Keys that reach Object.prototype (or a class) when used as property names on an object built from
// user input. Every parser of query strings, JSON bodies, form fields and manifests refuses them.
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
