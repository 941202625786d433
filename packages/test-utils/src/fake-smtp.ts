import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A local mail server for tests: real SMTP (the `smtp-server` package: EHLO, AUTH PLAIN/LOGIN,
 * MAIL FROM, RCPT TO, DATA) on 127.0.0.1, keeping every accepted message. Point a client at
 * `url` (smtp://user:pass@127.0.0.1:port). No STARTTLS is offered, so auth runs in clear, as a
 * test needs. Scripting: `failNext(n)` answers the next `n` messages' DATA with a temporary
 * failure (451), as a busy relay does.
 */
export interface FakeMail {
  from: string;
  to: string[];
  /** Header name (lower case) → value. */
  headers: Record<string, string>;
  subject: string;
  /** The body, quoted-printable decoded. */
  text: string;
  raw: string;
}

export interface FakeSmtp {
  url: string;
  messages: FakeMail[];
  /** Authentication attempts refused (wrong user or password). */
  refusedLogins: number;
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startFakeSmtp(opts: { user?: string; pass?: string } = {}): Promise<FakeSmtp> {
  const user = opts.user ?? 'wds';
  const pass = opts.pass ?? 'mail-test-password';
  let failing = 0;
  const state = { messages: [] as FakeMail[], refusedLogins: 0 };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === pass) return cb(null, { user });
      state.refusedLogins++;
      return cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (failing > 0) {
          failing--;
          return cb(Object.assign(new Error('Try again later'), { responseCode: 451 }));
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        state.messages.push({ ...parse(raw), from, to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb(null);
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://${user}:${pass}@127.0.0.1:${port}`,
    get messages() {
      return state.messages;
    },
    get refusedLogins() {
      return state.refusedLogins;
    },
    failNext: (n) => void (failing = n),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function parse(raw: string): Pick<FakeMail, 'headers' | 'subject' | 'text'> {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let text = raw.slice(split + 4);
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) text = quotedPrintable(text);
  else if (/base64/i.test(headers['content-transfer-encoding'] ?? '')) text = Buffer.from(text, 'base64').toString('utf8');
  return { headers, subject: encodedWords(headers.subject ?? ''), text: text.replace(/\r\n/g, '\n') };
}

function quotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) in a header, decoded. */
function encodedWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_m, _cs: string, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : quotedPrintable(data.replace(/_/g, ' ')),
  );
}
