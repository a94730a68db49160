// The `tr46` package ships no type declarations; these cover the two functions its README documents.
declare module 'tr46' {
  interface ProcessingOptions {
    checkHyphens?: boolean;
    checkBidi?: boolean;
    checkJoiners?: boolean;
    useSTD3ASCIIRules?: boolean;
    transitionalProcessing?: boolean;
    ignoreInvalidPunycode?: boolean;
  }
  const tr46: {
    /** The A-label form of a domain name, or null when processing finds an error. */
    toASCII(domainName: string, options?: ProcessingOptions & { verifyDNSLength?: boolean }): string | null;
    /** The Unicode form of a domain name, and whether processing found an error. */
    toUnicode(domainName: string, options?: ProcessingOptions): { domain: string; error: boolean };
  };
  export default tr46;
}
