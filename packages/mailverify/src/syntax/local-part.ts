/**
 * The mailbox a local part names (RFC 5321 §4.1.2): a Quoted-string stands for its content with the quoted pairs
 * undone (`"jo\"e"` names `jo"e`, `"support"` names `support`); a Dot-string stands for itself.
 */
export function mailboxName(localPart: string): string {
  if (localPart.length < 2 || !localPart.startsWith('"') || !localPart.endsWith('"')) return localPart;
  let content = '';
  for (let i = 1; i < localPart.length - 1; i++) {
    if (localPart[i] === '\\') i++;
    content += localPart[i];
  }
  return content;
}
