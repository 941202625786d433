import type { Snippet } from './types';

/** IP addresses (v4 and v6) and credentials. */
export const NETWORK: Snippet[] = [
  { lang: 'en', text: 'Failed login from [[IP_ADDRESS:203.0.113.42]] at 02:14 UTC.' },
  { lang: 'en', text: 'Your IP address: [[IP_ADDRESS:198.51.100.7]]' },
  { lang: 'en', text: '```\n[[IP_ADDRESS:192.168.1.24]] - - [10/Oct/2023:13:55:36 +0000] "GET /index.html HTTP/1.1" 200 2326\n```' },
  { lang: 'en', text: 'The server listens on [[IP_ADDRESS:10.0.0.5]]:8080 behind the NAT.' },
  { lang: 'en', text: 'Client: [[IP_ADDRESS:2001:db8:85a3::8a2e:370:7334]]' },
  { lang: 'en', text: 'Blocked [[IP_ADDRESS:2001:0db8:0000:0000:0000:ff00:0042:8329]] after 5 attempts.' },
  { lang: 'en', text: 'Link-local address [[IP_ADDRESS:fe80::1ff:fe23:4567:890a]] on eth0.' },
  { lang: 'de', text: 'Zugriff von IP [[IP_ADDRESS:185.22.143.9]] wurde protokolliert.' },
  { lang: 'fr', text: 'Adresse IP enregistrée : [[IP_ADDRESS:81.56.210.33]]' },
  { lang: 'en', text: '| Host | Address |\n|---|---|\n| db-1 | [[IP_ADDRESS:172.16.4.11]] |\n| db-2 | [[IP_ADDRESS:172.16.4.12]] |' },
  { lang: 'en', text: 'Open [admin](http://[[IP_ADDRESS:192.0.2.15]]/admin) to configure the router.' },
  { lang: 'en', text: 'Mapped address [[IP_ADDRESS:::ffff:192.0.2.128]] seen in the proxy logs.' },
  { lang: 'en', text: 'export AWS_ACCESS_KEY_ID=[[SECRET:AKIAIOSFODNN7EXAMPLE]]' },
  { lang: 'en', text: 'Token: [[SECRET:ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R]]' },
  { lang: 'en', text: 'stripe.api_key = "[[SECRET:sk_live_4eC39HqLyjWDarjtT1zdp7dc]]"' },
  { lang: 'en', text: 'Authorization: Bearer [[SECRET:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.4Adcj3UFYzPUVaVF43FmMab6RlaQD8A9V8wFzzht-KQ]]' },
  { lang: 'en', text: 'password: [[SECRET:Tr0ub4dor&3]]' },
  { lang: 'de', text: 'Passwort: [[SECRET:Sommer2024!x]]' },
  { lang: 'en', text: 'OPENAI_API_KEY=[[SECRET:sk-proj-Xa81bZ0cQ7dLm2NpR4sT6uV8wY0zA1bC3dE5fG7h]]' },
  { lang: 'en', text: 'SLACK_TOKEN=[[SECRET:xoxb-2048-1357924680-AbCdEfGhIjKlMnOp]]' },
  { lang: 'en', text: 'Maps key: [[SECRET:AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q]]' },
  { lang: 'en', text: '[[SECRET:-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9cR3xk1Lw\n-----END RSA PRIVATE KEY-----]]' },
];
