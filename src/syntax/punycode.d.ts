// The npm `punycode` package (not Node's deprecated core module) ships no type declarations.
declare module 'punycode/punycode.js' {
  const punycode: {
    decode(input: string): string;
    encode(input: string): string;
    toASCII(input: string): string;
    toUnicode(input: string): string;
  };
  export default punycode;
}
