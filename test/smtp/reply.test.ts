import { describe, expect, it } from 'vitest';
import { enhancedCodeOf, parseReply, replyOf } from '../../packages/mailverify/src/smtp/reply.js';

describe('parseReply', () => {
  it('joins the lines of a multi-line reply and takes the enhanced code of the first line', () => {
    const reply = parseReply(
      '550-5.1.1 The email account that you tried to reach does not exist.\r\n550-5.1.1 Please try again.\r\n550 5.1.1 https://support.google.com/mail/?p=NoSuchUser gsmtp\r\n',
    );
    expect(reply).toEqual({
      code: 550,
      enhancedCode: '5.1.1',
      lines: [
        '5.1.1 The email account that you tried to reach does not exist.',
        '5.1.1 Please try again.',
        '5.1.1 https://support.google.com/mail/?p=NoSuchUser gsmtp',
      ],
      text: '5.1.1 The email account that you tried to reach does not exist.\n5.1.1 Please try again.\n5.1.1 https://support.google.com/mail/?p=NoSuchUser gsmtp',
    });
  });

  it('reads single lines, bare codes and bare-LF line ends', () => {
    expect(parseReply('250 OK')).toMatchObject({ code: 250, enhancedCode: null, text: 'OK' });
    expect(parseReply('220')).toMatchObject({ code: 220, text: '' });
    expect(parseReply('250-mx.example\n250 PIPELINING\n')).toMatchObject({ code: 250, lines: ['mx.example', 'PIPELINING'] });
  });

  it('gives code 0 for a malformed reply and keeps its text', () => {
    for (const raw of ['garbage', '', '250-only a continuation', '250 a\r\n251 b', '250 done\r\n250 more', '2500 x', '199 x', '260 x', '25']) {
      expect(parseReply(raw).code, JSON.stringify(raw)).toBe(0);
    }
    expect(parseReply('hello\r\nworld').text).toBe('hello\nworld');
  });
});

describe('enhancedCodeOf', () => {
  it('takes the first code at the start of the text or of a line, when its class matches the reply', () => {
    expect(enhancedCodeOf(550, '5.1.1 User unknown')).toBe('5.1.1');
    expect(enhancedCodeOf(550, 'Requested action not taken:\n5.7.606 Access denied')).toBe('5.7.606');
    expect(enhancedCodeOf(451, '4.7.1 Greylisted')).toBe('4.7.1');
    expect(enhancedCodeOf(550, '5.1.1')).toBe('5.1.1');
  });

  it('ignores a code of another class, one in mid-line, or one glued to more text', () => {
    expect(enhancedCodeOf(550, '4.2.1 odd')).toBeNull();
    expect(enhancedCodeOf(550, 'User unknown 5.1.1')).toBeNull();
    expect(enhancedCodeOf(550, '5.1.1x bad')).toBeNull();
    expect(enhancedCodeOf(550, '5.1234.1 too long')).toBeNull();
    expect(enhancedCodeOf(550, '5..1 empty')).toBeNull();
  });

  it('is what replyOf records', () => {
    expect(replyOf(452, '4.2.2 Mailbox full')).toEqual({ code: 452, enhancedCode: '4.2.2', lines: ['4.2.2 Mailbox full'], text: '4.2.2 Mailbox full' });
  });
});
