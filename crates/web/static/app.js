// mcfed's live page: one panel per cluster, the decision stream and the
// plots, kept up to date by the frames the server pushes (server-sent
// events on /events). Plain DOM and SVG; nothing is fetched from elsewhere.
'use strict';

const MAX_POINTS = 2000;      // as the server keeps (crates/web/src/state.rs)
const MAX_DECISIONS = 500;
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf', '#bcbd22'];
const SVG = 'http://www.w3.org/2000/svg';

const live = { clusters: [], series: new Map(), decisions: [], frames: 0 };
const openHosts = new Set();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

function clock(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  const total = Math.max(0, Math.floor(seconds));
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(Math.floor(total / 3600))}:${pad(Math.floor(total / 60) % 60)}:${pad(total % 60)}`;
}

function num(value) {
  return value === null || value === undefined ? '-' : String(value);
}

// ---- frames -------------------------------------------------------------

function takeFrame(frame) {
  if (frame.full) {
    live.series = new Map();
    live.decisions = [];
  }
  live.clusters = frame.clusters;
  for (const update of frame.series) {
    let series = live.series.get(update.id);
    if (!series) {
      series = { chart: update.chart, label: update.label, points: [] };
      live.series.set(update.id, series);
    }
    for (const point of update.points) {
      if (series.points.length >= MAX_POINTS) {
        series.points = series.points.filter((_, index) => index % 2 === 0);
      }
      series.points.push(point);
    }
  }
  live.decisions.push(...frame.decisions);
  if (live.decisions.length > MAX_DECISIONS) {
    live.decisions.splice(0, live.decisions.length - MAX_DECISIONS);
  }
  live.frames += 1;
  document.body.dataset.frames = String(live.frames);
  render(frame);
}

function render(frame) {
  const times = live.clusters.map((c) => c.now).filter((t) => t !== null && t !== undefined);
  document.getElementById('clock').textContent =
    times.length ? `emulated time ${clock(Math.max(...times))}` : '';
  renderClusters();
  renderStaleness();
  renderDecisions(frame);
}

// ---- cluster panels -----------------------------------------------------

function renderClusters() {
  const root = document.getElementById('clusters');
  const panels = live.clusters.map(panel);
  root.replaceChildren(...panels);
}

function panel(cluster) {
  const section = el('section', { class: `cluster ${cluster.status}`, 'data-cluster': cluster.cluster });
  section.append(el('h2', { text: cluster.cluster }));
  const meta = [cluster.status];
  if (cluster.address) meta.push(cluster.address);
  if (cluster.now !== null && cluster.now !== undefined) meta.push(`at ${clock(cluster.now)}`);
  section.append(el('div', { class: 'meta', text: meta.join(' · ') }));
  if (cluster.error) section.append(el('div', { class: 'error', text: cluster.error }));
  section.append(queueChart(cluster.cluster));
  section.append(queueTable(cluster.queues));
  if (cluster.held.length) section.append(heldTable(cluster));
  section.append(hostList(cluster));
  return section;
}

function queueTable(queues) {
  const table = el('table', { class: 'queues' },
    el('thead', {}, el('tr', {}, ...['queue', 'prio', 'run', 'pend', 'susp', 'slots', 'flow'].map((h) => el('th', { text: h })))));
  const body = el('tbody');
  for (const q of queues) {
    let flow = '';
    if (q.send_to.length) flow = `sends to ${q.send_to.join(', ')}`;
    else if (q.receive_from.length) flow = `receives from ${q.receive_from.join(', ')}`;
    body.append(el('tr', {},
      el('td', { text: q.queue }), el('td', { text: q.priority }), el('td', { text: q.run }),
      el('td', { text: q.pend }), el('td', { text: q.susp }), el('td', { text: q.slots }),
      el('td', { class: 'text', text: flow })));
  }
  table.append(body);
  return el('div', {}, el('h3', { text: 'Queues (slots)' }), table);
}

function heldTable(cluster) {
  // Each figure as "held / true": what the submission cluster holds (and
  // its next decision reads), and what the queue publishes now; red where
  // they differ.
  const head = ['held by', 'queue', 'age', 'avail', 'run', 'pend', 'preempt'];
  const table = el('table', { class: 'held' }, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { text: h })))));
  const body = el('tbody');
  const fields = [['available', 'available'], ['running', 'running'], ['pending', 'pending'], ['preemptable_available', 'preemptable']];
  for (const line of cluster.held) {
    // In the queue's own panel its cluster goes without saying.
    const queue = line.queue.endsWith(`@${cluster.cluster}`) ? line.queue.slice(0, -cluster.cluster.length - 1) : line.queue;
    const row = el('tr', {}, el('td', { text: line.holder }), el('td', { text: queue }),
      el('td', { text: line.age === null ? '-' : `${Math.round(line.age)}s` }));
    for (const [field, name] of fields) {
      const held = line.seen ? line.seen[field] : '-';
      const truth = line.truth ? line.truth[field] : '-';
      row.append(el('td', { class: line.differs.includes(name) ? 'differs' : null, text: `${held} / ${truth}` }));
    }
    body.append(row);
  }
  table.append(body);
  const title = cluster.held.some((line) => line.holder !== cluster.cluster)
    ? 'Counters held for these queues (held / true)'
    : 'Counters this cluster holds (held / true; their clusters are not watched here)';
  return el('div', {}, el('h3', { text: title }), table);
}

function hostList(cluster) {
  const details = el('details', {});
  if (openHosts.has(cluster.cluster)) details.open = true;
  details.addEventListener('toggle', () => {
    const was = openHosts.has(cluster.cluster);
    if (details.open) openHosts.add(cluster.cluster); else openHosts.delete(cluster.cluster);
    if (details.open && !was) renderClusters();
  });
  const used = cluster.hosts.reduce((sum, h) => sum + h.njobs, 0);
  const slots = cluster.hosts.reduce((sum, h) => sum + h.max, 0);
  details.append(el('summary', { text: `Hosts: ${cluster.hosts.length}, ${used} of ${slots} slots used` }));
  // A cluster may have thousands of hosts: their rows are built only
  // while they are shown.
  if (!details.open) return details;
  const table = el('table', { class: 'hosts' },
    el('thead', {}, el('tr', {}, ...['host', 'status', 'max', 'njobs', 'run', 'ssusp', 'ususp'].map((h) => el('th', { text: h })))));
  const body = el('tbody');
  for (const h of cluster.hosts) {
    body.append(el('tr', {}, el('td', { text: h.host_name }), el('td', { text: h.status }), el('td', { text: h.max }),
      el('td', { text: h.njobs }), el('td', { text: h.run }), el('td', { text: h.ssusp }), el('td', { text: h.ususp })));
  }
  table.append(body);
  details.append(table);
  return details;
}

// ---- charts -------------------------------------------------------------

function seriesOf(chart) {
  return [...live.series.values()].filter((s) => s.chart === chart);
}

function queueChart(cluster) {
  const series = seriesOf(`queues:${cluster}`);
  // One colour per queue: pending solid, running dashed.
  const queues = [...new Set(series.map((s) => s.label.replace(/ (pending|running)$/, '')))];
  const lines = series.map((s) => {
    const queue = s.label.replace(/ (pending|running)$/, '');
    return { label: s.label, points: s.points, color: PALETTE[queues.indexOf(queue) % PALETTE.length], dashed: s.label.endsWith('running') };
  });
  return el('div', {}, el('h3', { text: 'Pending and running slots per queue' }),
    chart(lines, [], 'slots', 420, 150));
}

function renderStaleness() {
  const lines = seriesOf('staleness').map((s, index) => ({ label: s.label, points: s.points, color: PALETTE[index % PALETTE.length], dashed: false }));
  const markers = live.decisions.filter((d) => d.view_age !== null && d.view_age !== undefined)
    .map((d) => ({ x: d.time, y: d.view_age, stale: d.stale === true }));
  document.getElementById('staleness').replaceChildren(chart(lines, markers, 'age (s)', 1000, 260));
}

// A tick step of 1, 2 or 5 times a power of ten giving about four steps.
function niceStep(span) {
  const raw = span / 4;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

function chart(lines, markers, yLabel, W, H) {
  const L = 42, R = 10, T = 8, B = 22;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img' });
  const xs = [], ys = [0];
  for (const line of lines) for (const [x, y] of line.points) { xs.push(x); ys.push(y); }
  for (const m of markers) { xs.push(m.x); ys.push(m.y); }
  const box = el('div', { class: 'chart' }, root);
  if (!xs.length) {
    const text = svg('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' });
    text.textContent = 'no samples yet';
    root.append(text);
    return box;
  }
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (x1 - x0 < 1) x1 = x0 + 1;
  const step = niceStep(Math.max(1, Math.max(...ys) * 1.05));
  const y1 = Math.ceil(Math.max(1, Math.max(...ys) * 1.05) / step) * step;
  const px = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const py = (y) => H - B - y / y1 * (H - T - B);
  for (let y = 0; y <= y1 + step / 2; y += step) {
    root.append(svg('line', { x1: L, x2: W - R, y1: py(y), y2: py(y), class: 'grid' }));
    const yt = svg('text', { x: L - 4, y: py(y) + 3, 'text-anchor': 'end' });
    yt.textContent = step >= 1 ? String(Math.round(y)) : y.toFixed(1);
    root.append(yt);
  }
  for (let i = 0; i <= 4; i++) {
    const x = x0 + (x1 - x0) * i / 4;
    const xt = svg('text', { x: px(x), y: H - B + 14, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' });
    xt.textContent = clock(x);
    root.append(xt);
  }
  root.append(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
  root.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  const label = svg('text', { x: 10, y: T + (H - T - B) / 2, transform: `rotate(-90 10 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle' });
  label.textContent = yLabel;
  root.append(label);
  for (const line of lines) {
    if (!line.points.length) continue;
    const path = line.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
    const attrs = { points: path, fill: 'none', stroke: line.color, 'stroke-width': 1.8 };
    if (line.dashed) attrs['stroke-dasharray'] = '5 3';
    const poly = svg('polyline', attrs);
    const title = svg('title', {});
    title.textContent = line.label;
    poly.append(title);
    root.append(poly);
  }
  for (const m of markers) {
    root.append(svg('circle', { cx: px(m.x), cy: py(m.y), r: 3, fill: m.stale ? '#c62828' : '#455a64', opacity: 0.8 }));
  }
  const legend = el('div', { class: 'legend' });
  for (const line of lines) {
    const item = el('span', { class: line.dashed ? 'dashed' : null, text: line.label });
    item.style.setProperty('--swatch', line.color);
    legend.append(item);
  }
  box.append(legend);
  return box;
}

// ---- decisions ----------------------------------------------------------

function decisionNode(item, fresh) {
  const classes = ['decision'];
  if (item.stale === true) classes.push('stale');
  if (fresh) classes.push('fresh');
  const node = el('article', { class: classes.join(' '), 'data-job': item.job, 'data-cluster': item.cluster },
    el('pre', { text: item.text }));
  node.dataset.search = `${item.text}`.toLowerCase();
  return node;
}

function renderDecisions(frame) {
  const root = document.getElementById('decisions');
  if (frame.full) {
    root.replaceChildren(...live.decisions.slice().reverse().map((item) => decisionNode(item, false)));
  } else {
    for (const item of frame.decisions) root.prepend(decisionNode(item, true));
    while (root.children.length > MAX_DECISIONS) root.lastElementChild.remove();
  }
  applyFilter();
}

function applyFilter() {
  const query = document.getElementById('decision-filter').value.trim().toLowerCase();
  let shown = 0;
  for (const node of document.getElementById('decisions').children) {
    const match = !query || node.dataset.search.includes(query);
    node.hidden = !match;
    if (match) shown += 1;
  }
  const total = document.getElementById('decisions').children.length;
  document.getElementById('decision-count').textContent =
    query ? `(${shown} of ${total} shown)` : `(${total}, newest first)`;
}

// ---- connection ---------------------------------------------------------

function connect() {
  const status = document.getElementById('status');
  const source = new EventSource('/events');
  source.onopen = () => { status.className = 'status live'; status.textContent = 'live'; };
  source.onmessage = (message) => {
    status.className = 'status live';
    status.textContent = 'live';
    takeFrame(JSON.parse(message.data));
  };
  // The watched processes stopped: the page keeps what it shows.
  source.addEventListener('end', (message) => {
    source.close();
    status.className = 'status ended';
    status.textContent = 'ended';
    status.title = message.data;
    document.getElementById('ended').textContent = message.data;
  });
  source.onerror = () => {
    status.className = 'status lost';
    status.textContent = source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…';
  };
}

document.getElementById('decision-filter').addEventListener('input', applyFilter);
connect();
