/**
 * Every way a page has to open a connection, aimed at listeners of the test on 127.0.0.1: a TCP
 * listener that counts accepted connections and a UDP socket that counts datagrams. A page (or
 * interact's code sandbox) that must have no network runs `egressProbeCode(...)` and the test
 * asserts that neither listener heard anything — a count, not an error message, so a kind whose
 * failure is silent (WebRTC, beacons, preconnect) cannot pass by throwing.
 *
 * The list is the one place these kinds are named; extend it when another way out turns up.
 */
import dgram from 'node:dgram';
import net from 'node:net';

export interface EgressListeners {
  tcpPort: number;
  udpPort: number;
  /** TCP connections accepted so far. */
  accepts(): number;
  /** UDP datagrams received so far. */
  datagrams(): number;
  close(): Promise<void>;
}

export async function startEgressListeners(): Promise<EgressListeners> {
  let accepted = 0;
  let received = 0;
  const tcp = net.createServer((s) => {
    accepted++;
    s.on('error', () => {});
    s.destroy();
  });
  const udp = dgram.createSocket('udp4');
  udp.on('message', () => received++);
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  return {
    tcpPort: (tcp.address() as net.AddressInfo).port,
    udpPort: udp.address().port,
    accepts: () => accepted,
    datagrams: () => received,
    close: async () => {
      udp.close();
      await new Promise<void>((r) => tcp.close(() => r()));
    },
  };
}

/** The kinds the probe tries, in order (its result lists the ones it got to). */
export const EGRESS_KINDS = [
  'fetch', 'fetch-keepalive', 'xhr', 'websocket', 'eventsource', 'beacon', 'img', 'script', 'stylesheet', 'css-url',
  'font', 'preconnect', 'prefetch', 'iframe', 'iframe-navigation', 'form', 'window-open', 'media', 'import', 'worker',
  'service-worker', 'ping', 'webtransport', 'stun-udp', 'turn-udp', 'turn-tcp', 'turns',
] as const;

/**
 * A page-side expression (for `page.evaluate`; interact code awaits it) that tries every kind
 * against the listeners, waits `settleMs` for the asynchronous ones (ICE gathering, beacons), and
 * resolves to the list of kinds it tried.
 */
export function egressProbe(l: Pick<EgressListeners, 'tcpPort' | 'udpPort'>, settleMs = 4_000): string {
  return String.raw`(async () => {
  const http = 'http://127.0.0.1:${l.tcpPort}';
  const tried = [];
  const add = (html) => { const d = document.createElement('div'); d.innerHTML = html; document.body.append(d); };
  const rtc = async (urls) => {
    const pc = new RTCPeerConnection({ iceServers: [{ urls, username: 'u', credential: 'p' }] });
    pc.createDataChannel('x');
    await pc.setLocalDescription(await pc.createOffer());
    setTimeout(() => pc.close(), ${settleMs});
  };
  const kinds = {
    'fetch': () => fetch(http + '/fetch').catch(() => {}),
    'fetch-keepalive': () => fetch(http + '/keepalive', { method: 'POST', body: 'x', keepalive: true }).catch(() => {}),
    'xhr': () => { const x = new XMLHttpRequest(); x.open('GET', http + '/xhr'); x.send(); },
    'websocket': () => { new WebSocket('ws://127.0.0.1:${l.tcpPort}/ws'); },
    'eventsource': () => { new EventSource(http + '/sse'); },
    'beacon': () => navigator.sendBeacon(http + '/beacon', 'x'),
    'img': () => { new Image().src = http + '/img'; },
    'script': () => { const s = document.createElement('script'); s.src = http + '/script.js'; document.head.append(s); },
    'stylesheet': () => add('<link rel="stylesheet" href="' + http + '/style.css">'),
    'css-url': () => add('<div style="background:url(' + http + '/bg.png);width:9px;height:9px"></div>'),
    'font': () => new FontFace('probe', 'url(' + http + '/font.woff2)').load().catch(() => {}),
    'preconnect': () => add('<link rel="preconnect" href="http://127.0.0.1:${l.tcpPort}">'),
    'prefetch': () => add('<link rel="prefetch" href="' + http + '/prefetch">'),
    'iframe': () => add('<iframe src="' + http + '/frame"></iframe>'),
    'iframe-navigation': () => { const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.location.href = http + '/nav'; },
    'form': () => { add('<iframe name="probe-target"></iframe><form id="probe-form" method="post" target="probe-target" action="' + http + '/form"></form>'); document.getElementById('probe-form').submit(); },
    'window-open': () => { window.open(http + '/popup'); },
    'media': () => { const v = document.createElement('video'); v.src = http + '/video.mp4'; v.load(); document.body.append(v); },
    'import': () => import(http + '/module.js').catch(() => {}),
    'worker': () => { const w = new Worker(URL.createObjectURL(new Blob(['fetch("' + http + '/from-worker").catch(() => {})']))); w.onerror = () => {}; },
    'service-worker': () => navigator.serviceWorker.register(http + '/sw.js').catch(() => {}),
    'ping': () => { const a = document.createElement('a'); a.href = '#'; a.ping = http + '/ping'; document.body.append(a); a.click(); },
    'webtransport': () => { const t = new WebTransport('https://127.0.0.1:${l.udpPort}/wt'); t.ready.catch(() => {}); t.closed.catch(() => {}); },
    'stun-udp': () => rtc('stun:127.0.0.1:${l.udpPort}'),
    'turn-udp': () => rtc('turn:127.0.0.1:${l.udpPort}?transport=udp'),
    'turn-tcp': () => rtc('turn:127.0.0.1:${l.tcpPort}?transport=tcp'),
    'turns': () => rtc('turns:127.0.0.1:${l.tcpPort}?transport=tcp'),
  };
  for (const [name, go] of Object.entries(kinds)) {
    try { await go(); } catch (e) {}
    tried.push(name);
  }
  await new Promise((r) => setTimeout(r, ${settleMs}));
  return tried;
})()`;
}

/** A page-side expression that only asks a TURN server over TCP on 127.0.0.1:`port`, given `waitMs` to connect: the control that the listener hears a page nothing holds back. */
export function turnTcpProbe(port: number, waitMs = 3_000): string {
  return `(async () => {
  const pc = new RTCPeerConnection({ iceServers: [{ urls: 'turn:127.0.0.1:${port}?transport=tcp', username: 'u', credential: 'p' }] });
  pc.createDataChannel('x');
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((r) => setTimeout(r, ${waitMs}));
  pc.close();
})()`;
}
