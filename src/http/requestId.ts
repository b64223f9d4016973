import { randomUUID } from 'node:crypto';

/** An `x-request-id` a proxy or client may have set: kept only if it is short and plain (it goes into logs). */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}
