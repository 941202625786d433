import type { Snippet } from './types';

/**
 * Written after the detectors were tuned on the other groups and never tuned on: its figures
 * (README) estimate how the detectors do on text they were not fitted to.
 */
export const HOLDOUT: Snippet[] = [
  { lang: 'en', text: 'Got a question about your booking? Drop a line to [[EMAIL:bookings@seaside-cottages.co.uk]] or phone [[PHONE:01632 960 123]].' },
  { lang: 'en', text: 'Alumni office – [[EMAIL:alumni.relations@kings-college.ac.uk]] – [[PHONE:+44 (0)20 7836 5454]]' },
  { lang: 'en', text: 'Media contact: [[PERSON:Olivia Hart]], [[EMAIL:ohart@brightwave.com]], [[PHONE:(617) 555-0182]]' },
  { lang: 'en', text: 'Payment received from card ending 4242. Full number on file: [[CREDIT_CARD:4242 4242 4242 4242]].' },
  { lang: 'en', text: 'Wire to [[IBAN:GB29 NWBK 6016 1331 9268 19]] quoting your customer number 88123.' },
  { lang: 'de', text: 'Überweisung bitte an [[IBAN:DE75 5121 0800 1245 1261 99]] (Kontoinhaber: Verein für Heimatpflege e.V.).' },
  { lang: 'fr', text: 'Votre conseiller, M. [[PERSON:Olivier Dubois]], est joignable au [[PHONE:03 88 12 34 56]].' },
  { lang: 'es', text: 'Solicitante: [[PERSON:Lucía Martínez]] · DNI [[NATIONAL_ID:48291736Q]] · Tel. [[PHONE:654 32 10 98]]' },
  { lang: 'it', text: 'Scrivici a [[EMAIL:assistenza@negozio-online.it]] o chiama il [[PHONE:+39 02 4567 8901]].' },
  { lang: 'nl', text: 'Vragen? Mail [[EMAIL:info@bakkerij-jansen.nl]] of bel [[PHONE:030 234 5678]].' },
  { lang: 'pt', text: 'Cliente: CPF [[NATIONAL_ID:529.982.247-25]], telefone [[PHONE:(21) 99876-5432]].' },
  { lang: 'en', text: 'Suspicious requests from [[IP_ADDRESS:45.33.32.156]] and [[IP_ADDRESS:2606:4700:4700::1111]] were rate-limited.' },
  { lang: 'en', text: 'Deploy with GITHUB_TOKEN=[[SECRET:ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba]] in the CI secrets.' },
  { lang: 'en', text: 'Return address: [[ADDRESS:45 Orchard Lane, Bristol BS1 4DJ]]' },
  { lang: 'de', text: 'Praxis Dr. [[PERSON:Weber]], [[ADDRESS:Bahnhofstraße 12, 70173 Stuttgart]]' },
  { lang: 'en', text: 'SSN on the form: [[NATIONAL_ID:512-44-7790]]. Date signed: 04/11/2024.' },
  { lang: 'en', text: 'Order 77812-B, 3 items, subtotal $84.97, shipped via UPS Ground on 2024-06-02.' },
  { lang: 'en', text: 'Version 3.2.1.0 of the SDK drops support for Python 3.7.' },
  { lang: 'en', text: 'ISBN 978-0-13-468599-1 — Effective Java, 3rd Edition.' },
  { lang: 'de', text: 'Rechnungsnummer RE-2024-00321 vom 14.02.2024, Kundennummer 100234.' },
  { lang: 'fr', text: 'Réf. produit 3401-556-221, garantie 2 ans, 49,90 €.' },
  { lang: 'en', text: 'Room 1204, floor 12, badge 0047 — see the facilities map v1.4.2.' },
  { lang: 'en', text: 'Flight BA 2490 departs 07:45 from gate 32, seat 14C.' },
  { lang: 'en', text: 'The 2019–2023 dataset covers 1,024 hospitals in 48 states.' },
  { lang: 'es', text: 'Factura 2024-A-000981, importe 1.250,00 €, vencimiento 30/06/2024.' },
  { lang: 'en', text: 'Serial: 5CD1234XYZ, MAC 3C:22:FB:11:22:33, asset tag 004512.' },
  { lang: 'en', text: 'Kind regards,\n[[PERSON:Hannah Fischer]]\nCustomer Success' },
  { lang: 'en', text: 'Ring [[PHONE:1-800-555-0199]] toll-free, or [[PHONE:+1 415 555 0111]] from abroad.' },
  { lang: 'it', text: 'Codice fiscale [[NATIONAL_ID:RSSMRA85T10A562S]] del richiedente.' },
  { lang: 'nl', text: 'Mijn BSN is [[NATIONAL_ID:111222333]] en mijn IBAN [[IBAN:NL02 ABNA 0123 4567 89]].' },
];
