// The SmtpTransportError a transport's promise rejects with, for the transport tests.
import { expect } from 'vitest';
import { SmtpTransportError } from '../../packages/mailverify/src/smtp/transport.js';

/** Resolves to the error a promise rejects with; fails the test if it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<SmtpTransportError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SmtpTransportError);
    return error as SmtpTransportError;
  }
  throw new Error('expected a rejection');
}
