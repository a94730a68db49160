// Syntax policy options: forms the RFCs allow that a user may refuse, through parseAddress and the verifier.
import { describe, expect, it } from 'vitest';
import { createVerifier, parseAddress, type SyntaxOptions } from '../../packages/mailverify/src/index.js';

const failure = (input: string, options: SyntaxOptions): string => {
  const result = parseAddress(input, options);
  return result.ok ? 'Success' : `${result.status}@${result.syntaxFailureIndex}`;
};

describe('parseAddress options', () => {
  it('accepts every form by default, with or without an options object', () => {
    for (const input of ['"john doe"@example.com', 'user@[192.0.2.1]', 'josé@example.com', 'jo@gmail.com']) {
      const byDefault = parseAddress(input);
      expect(parseAddress(input, {})).toEqual(byDefault);
      expect(
        parseAddress(input, {
          allowQuotedLocalPart: true,
          allowAddressLiteral: true,
          allowInternationalLocalPart: true,
          providerRules: true,
        }),
      ).toEqual(byDefault);
    }
    expect(parseAddress('jo@gmail.com')).toMatchObject({ ok: false, status: 'IspSpecificSyntaxFailure' });
  });

  it('allowQuotedLocalPart: false refuses a quoted local part at its opening quote', () => {
    const off = { allowQuotedLocalPart: false };
    expect(failure('"john doe"@example.com', off)).toBe('InvalidCharacterInSequence@0');
    expect(failure('(comment) "john"@example.com', off)).toBe('InvalidCharacterInSequence@10');
    expect(failure('"a@b"', off)).toBe('InvalidCharacterInSequence@0'); // before AtSignNotFound at the end
    // A quote that is not a quoted local part keeps its own status.
    expect(failure('john"doe"@example.com', off)).toBe('InvalidWordBoundaryStart@4');
    expect(failure('john.doe@example.com', off)).toBe('Success');
  });

  it('allowAddressLiteral: false refuses a literal at its `[`, as the verifier refuses a non-global one', () => {
    const off = { allowAddressLiteral: false };
    expect(failure('user@[192.0.2.1]', off)).toBe('UnacceptableDomainLiteral@5');
    expect(failure('user@ [IPv6:2001:db8::1]', off)).toBe('UnacceptableDomainLiteral@6');
    expect(failure('user@[1.2.3]', off)).toBe('UnacceptableDomainLiteral@5'); // was @11, at the `]`
    expect(failure('user@example.com', off)).toBe('Success');
  });

  it('allowInternationalLocalPart: false refuses a non-ASCII character of the local part, quoted or escaped', () => {
    const off = { allowInternationalLocalPart: false };
    expect(failure('josé@example.com', off)).toBe('InvalidCharacterInSequence@3');
    expect(failure('"jo sé"@example.com', off)).toBe('InvalidCharacterInSequence@5');
    expect(failure('"test\\©"@iana.org', off)).toBe('InvalidCharacterInSequence@6');
    expect(failure('＠@fullwidth.at', off)).toBe('InvalidCharacterInSequence@0');
    // The domain is not the local part: an IDN still goes out as A-labels, without SMTPUTF8.
    expect(parseAddress('jose@bücher.example', off)).toMatchObject({
      ok: true,
      asciiDomainPart: 'xn--bcher-kva.example',
      hasInternationalMailboxName: false,
      hasInternationalDomainName: true,
    });
    expect(failure('(commént) jose@example.com', off)).toBe('Success');
  });

  it('providerRules: false leaves out IspSpecificSyntaxFailure, and nothing else', () => {
    const off = { providerRules: false };
    expect(parseAddress('jo@gmail.com', off)).toMatchObject({ ok: true, emailAddress: 'jo@gmail.com' });
    expect(failure('jo..x@gmail.com', off)).toBe('DoubleDotSequence@3');
  });

  it('refuses an options object it cannot read, naming the option', () => {
    expect(() => parseAddress('a@b.org', { allowQuoted: false } as SyntaxOptions)).toThrow(
      new TypeError('parseAddress: unknown option allowQuoted (did you mean allowQuotedLocalPart?)'),
    );
    expect(() => parseAddress('a@b.org', { providerRules: 'no' } as unknown as SyntaxOptions)).toThrow(
      new TypeError('parseAddress: option providerRules must be true or false, got "no"'),
    );
    expect(() => parseAddress('a@b.org', 'strict' as SyntaxOptions)).toThrow(
      new TypeError('parseAddress: options must be an object, got "strict"'),
    );
    expect(() => parseAddress('a@b.org', null as unknown as SyntaxOptions)).toThrow(TypeError);
  });
});

describe('the verifier\'s syntax option', () => {
  it('gives the same status and index as parseAddress, with no network', async () => {
    const syntax = { allowQuotedLocalPart: false, allowAddressLiteral: false, allowInternationalLocalPart: false };
    // checks: 'smtp' with no DNS server anyone could reach: a refused form is decided before any network stage.
    const verifier = createVerifier({ syntax, dns: { servers: ['192.0.2.1'], timeoutMs: 50 } });
    try {
      for (const input of ['"john doe"@example.com', 'user@[8.8.8.8]', 'josé@example.com']) {
        const entry = await verifier.verify(input);
        const parsed = parseAddress(input, syntax);
        expect(parsed.ok).toBe(false);
        if (parsed.ok) continue;
        expect(entry).toMatchObject({ status: parsed.status, syntaxFailureIndex: parsed.syntaxFailureIndex });
        expect(entry.classification).toBe('Undeliverable');
      }
      expect(verifier.stats().dns).toMatchObject({ queries: 0, misses: 0 });
    } finally {
      await verifier.close();
    }
  });

  it('providerRules: false lets a provider address through to the next stage', async () => {
    const strict = createVerifier({ checks: 'syntax' });
    const relaxed = createVerifier({ checks: 'syntax', syntax: { providerRules: false } });
    expect((await strict.verify('jo@gmail.com')).status).toBe('IspSpecificSyntaxFailure');
    expect((await relaxed.verify('jo@gmail.com')).status).toBe('Success');
    await Promise.all([strict.close(), relaxed.close()]);
  });

  it('refuses a syntax option it cannot read, naming its path', () => {
    expect(() => createVerifier({ syntax: { allowLiterals: false } as SyntaxOptions })).toThrow(
      /^createVerifier: unknown option syntax\.allowLiterals\b/,
    );
    expect(() => createVerifier({ syntax: { providerRules: 1 } as unknown as SyntaxOptions })).toThrow(
      new TypeError('createVerifier: option syntax.providerRules must be true or false, got 1'),
    );
    expect(() => createVerifier({ syntax: true as unknown as SyntaxOptions })).toThrow(
      new TypeError('createVerifier: option syntax must be an object, got true'),
    );
  });
});
