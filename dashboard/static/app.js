// The forkspace dashboard: a page over the REST API (/v1) and the change
// feed. No framework and no build step: elements are built with h(),
// text always goes through textContent, never innerHTML.

// ---- elements ---------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const $ = (sel) => document.querySelector(sel);

function fmtBytes(n) {
  if (n === undefined || n === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
}

function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? t : d.toLocaleString();
}

let toastTimer;
function toast(msg, kind) {
  const el = $('#toast');
  el.textContent = msg;
  el.className = kind || '';
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

// A button that asks once more before it acts: the first press turns it
// into "Confirm …" for a few seconds.
function confirmButton(label, action, cls) {
  const b = h('button', { type: 'button', class: cls || 'danger' }, label);
  let armed = false;
  let timer;
  b.addEventListener('click', () => {
    if (!armed) {
      armed = true;
      b.textContent = 'Confirm ' + label.toLowerCase();
      timer = setTimeout(() => { armed = false; b.textContent = label; }, 4000);
      return;
    }
    clearTimeout(timer);
    armed = false;
    b.textContent = label;
    action();
  });
  return b;
}

// ---- API --------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message, path) {
    super(message);
    this.status = status;
    this.code = code;
    this.path = path;
  }
}

const session = {
  get token() { return sessionStorage.getItem('fks.token') || ''; },
  set token(t) { if (t) sessionStorage.setItem('fks.token', t); else sessionStorage.removeItem('fks.token'); },
};

function authHeaders(extra) {
  const hd = new Headers(extra || {});
  if (session.token) hd.set('Authorization', 'Bearer ' + session.token);
  hd.set('X-Forkspace-Actor', 'dashboard');
  return hd;
}

async function errorOf(r) {
  let e = {};
  try { e = await r.json(); } catch { /* not JSON */ }
  return new ApiError(r.status, e.code || 'http_' + r.status, e.message || r.statusText || 'request failed', e.path);
}

async function api(method, url, opts = {}) {
  const headers = authHeaders(opts.headers);
  let body = opts.body;
  if (opts.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(opts.json);
  }
  const r = await fetch(url, { method, headers, body, signal: opts.signal });
  if (r.status === 401) signedOut();
  if (!r.ok) throw await errorOf(r);
  if (opts.raw) return r;
  if (r.status === 204) return null;
  const ct = r.headers.get('Content-Type') || '';
  return ct.includes('json') ? r.json() : r.text();
}

const encPath = (p) => p.split('/').filter(Boolean).map(encodeURIComponent).join('/');
const wsURL = (ws) => '/v1/workspaces/' + encodeURIComponent(ws);
const fileURL = (ws, p) => wsURL(ws) + '/files/' + encPath(p);

async function listAll(url, key) {
  let out = [];
  let cursor = '';
  for (;;) {
    const sep = url.includes('?') ? '&' : '?';
    const page = await api('GET', url + sep + 'limit=1000' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    out = out.concat(page[key] || []);
    if (!page.next) return out;
    cursor = page.next;
  }
}

// putFile streams one file with progress (XMLHttpRequest reports upload
// progress; fetch does not).
function putFile(ws, p, file, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('PUT', fileURL(ws, p));
    authHeaders().forEach((v, k) => x.setRequestHeader(k, v));
    x.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    x.onload = () => {
      if (x.status >= 200 && x.status < 300) {
        resolve(JSON.parse(x.responseText || 'null'));
        return;
      }
      let e = {};
      try { e = JSON.parse(x.responseText); } catch { /* not JSON */ }
      reject(new ApiError(x.status, e.code || 'http_' + x.status, e.message || x.statusText, e.path));
    };
    x.onerror = () => reject(new ApiError(0, 'network', 'the upload of ' + p + ' was cut off'));
    x.send(file);
  });
}

async function download(ws, p) {
  const r = await api('GET', fileURL(ws, p), { raw: true });
  const url = URL.createObjectURL(await r.blob());
  const a = h('a', { href: url, download: p.split('/').pop() });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// ---- sign in and scope ------------------------------------------------

// scope is what the signed-in token may do: its permissions (read, write,
// exec, admin) and workspace pattern, read from the token list, where a
// token finds itself. Without a token (a server without tokens) every
// control shows; the server decides either way, the page only hides what
// would be refused.
const scope = { perms: new Set(['read', 'write', 'exec', 'admin']), workspaces: '*', label: '' };
const can = (perm) => scope.perms.has(perm);

function setScope(k) {
  scope.perms = new Set(String(k.perms || '').split(',').filter(Boolean));
  if (scope.perms.has('admin')) ['read', 'write', 'exec'].forEach((p) => scope.perms.add(p));
  scope.workspaces = k.workspaces || '*';
  scope.label = k.label || k.id;
  const who = $('#who');
  who.hidden = false;
  who.textContent = scope.label + ' · ' + [...scope.perms].join(', ') + (scope.workspaces !== '*' ? ' · ' + scope.workspaces : '');
}

// loadScope applies the scope cached for this tab at once, then asks the
// server; it reports whether the answer differs from what was applied.
async function loadScope() {
  const t = session.token;
  const id = t.startsWith('fks_') ? t.slice(4).split('_')[0] : '';
  if (!id) return false;
  const cached = sessionStorage.getItem('fks.scope');
  if (cached) setScope(JSON.parse(cached));
  try {
    const mine = ((await api('GET', '/v1/tokens')) || []).find((k) => k.id === id);
    if (!mine) return false;
    const fresh = JSON.stringify({ id: mine.id, perms: mine.perms, workspaces: mine.workspaces, label: mine.label });
    sessionStorage.setItem('fks.scope', fresh);
    setScope(mine);
    return fresh !== cached;
  } catch {
    return false; // a server without tokens: everything shows, the server decides
  }
}


// signedIn is remembered for the tab, so a reload paints at once instead
// of waiting for a probe; any 401 afterwards signs out.
let signedIn = sessionStorage.getItem('fks.signedin') === '1';
const setSignedIn = (v) => { signedIn = v; if (v) sessionStorage.setItem('fks.signedin', '1'); else sessionStorage.removeItem('fks.signedin'); };

function signedOut() {
  if (!signedIn) return;
  setSignedIn(false);
  session.token = '';
  location.hash = '#/signin';
}

function renderSignIn(main, message) {
  const input = h('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'off', placeholder: 'fks_…', 'aria-label': 'Token' });
  const err = h('p', { class: 'muted', id: 'signin-error', role: 'status' }, message || '');
  const form = h('form', { class: 'signin', onsubmit: async (e) => {
    e.preventDefault();
    session.token = input.value.trim();
    try {
      await api('GET', '/v1/workspaces?limit=1');
      setSignedIn(true);
      sessionStorage.removeItem('fks.scope');
      scopeLoaded = true;
      await loadScope();
      location.hash = '#/';
    } catch (ex) {
      session.token = '';
      err.textContent = ex.status === 401 || ex.status === 403 ? 'That token is not valid here (expired, revoked or mistyped).' : ex.message;
      input.focus();
    }
  } },
  h('h1', {}, 'Sign in'),
  h('p', { class: 'muted' }, 'Paste a token made with ', h('code', {}, 'forkspace token create'), '. It stays in this tab only.'),
  h('label', { for: 'token' }, 'Token'), input,
  h('button', { type: 'submit', class: 'primary', id: 'signin-submit' }, 'Sign in'), err);
  main.replaceChildren(form);
  input.focus();
}

// ---- routing ----------------------------------------------------------

const TABS = ['files', 'checkpoints', 'forks', 'audit', 'mounts'];
let current = null; // the view being shown: { close() }
let scopeLoaded = false;

async function route() {
  const main = $('#main');
  if (current) { current.close(); current = null; }
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  $('#signout').hidden = !session.token;
  if (parts[0] === 'signin') {
    renderCrumbs([]);
    renderSignIn(main);
    return;
  }
  if (!signedIn) {
    try {
      await api('GET', '/v1/workspaces?limit=1');
      setSignedIn(true);
    } catch (ex) {
      renderCrumbs([]);
      renderSignIn(main, ex.status === 401 ? '' : ex.message);
      return;
    }
  }
  if (!scopeLoaded) {
    scopeLoaded = true;
    const first = loadScope();
    if (!sessionStorage.getItem('fks.scope') && session.token) await first; // nothing cached: wait, so nothing shows that the token may not do
    else first.then((changed) => { if (changed) route(); });
  }
  if (parts[0] === 'ws' && parts[1]) {
    const ws = parts[1];
    const tab = TABS.includes(parts[2]) ? parts[2] : 'files';
    renderCrumbs([[ws, '#/ws/' + encodeURIComponent(ws)]]);
    current = workspaceView(main, ws, tab, parts.slice(3).join('/'));
    return;
  }
  renderCrumbs([]);
  current = workspacesView(main);
}

function renderCrumbs(items) {
  const nav = $('#crumbs');
  nav.replaceChildren(...items.flatMap(([label, href], i) => [i ? ' / ' : '', h('a', { href }, label)]));
}

// ---- workspaces -------------------------------------------------------

function workspacesView(main) {
  const body = h('tbody');
  const name = h('input', { type: 'text', id: 'new-ws', placeholder: 'name', 'aria-label': 'New workspace name' });
  main.replaceChildren(
    h('h1', {}, 'Workspaces'),
    !can('write') ? '' : h('form', { class: 'row', id: 'create-ws', onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api('POST', '/v1/workspaces', { json: { name: name.value.trim() } });
        name.value = '';
        load();
      } catch (ex) { toast(ex.message); }
    } }, name, h('button', { type: 'submit' }, 'Create')),
    h('table', {}, h('thead', {}, h('tr', {},
      h('th', {}, 'Name'), h('th', { class: 'num' }, 'Files'), h('th', { class: 'num' }, 'Size'),
      h('th', { class: 'num hide-narrow' }, 'Exclusive'), h('th', { class: 'num hide-narrow' }, 'Shared'),
      h('th', { class: 'hide-narrow' }, 'Forked from'), h('th', {}, ''))), body));
  async function load() {
    try {
      const [list, df] = await Promise.all([listAll('/v1/workspaces', 'workspaces'), api('GET', '/v1/df').catch(() => null)]);
      const usage = new Map((df?.workspaces || []).map((w) => [w.id, w]));
      const byID = new Map(list.map((w) => [w.id, w.name]));
      body.replaceChildren(...list.map((w) => h('tr', { 'data-ws': w.name },
        h('td', {}, h('a', { href: '#/ws/' + encodeURIComponent(w.name) }, w.name), w.conflicts ? h('span', { class: 'badge failed' }, 'conflicts') : null),
        h('td', { class: 'num' }, w.entries), h('td', { class: 'num' }, fmtBytes(w.bytes)),
        h('td', { class: 'num hide-narrow' }, fmtBytes(usage.get(w.id)?.exclusive_bytes)),
        h('td', { class: 'num hide-narrow' }, fmtBytes(usage.get(w.id)?.shared_bytes)),
        h('td', { class: 'hide-narrow' }, w.parent_id ? byID.get(w.parent_id) || w.parent_id : ''),
        h('td', {}, !can('write') ? '' : confirmButton('Delete', async () => {
          try { await api('DELETE', wsURL(w.name)); load(); } catch (ex) { toast(ex.message); }
        })))));
      if (!list.length) body.replaceChildren(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No workspaces yet.')));
    } catch (ex) { toast(ex.message); }
  }
  load();
  const onFocus = () => load();
  window.addEventListener('focus', onFocus);
  return { close() { window.removeEventListener('focus', onFocus); } };
}

// ---- one workspace ----------------------------------------------------

function workspaceView(main, ws, tab, rest) {
  const readOnly = ws.includes('@') || !can('write');
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Workspace' }, TABS.map((t) =>
    h('a', { href: '#/ws/' + encodeURIComponent(ws) + '/' + t, 'aria-current': t === tab ? 'page' : null, id: 'tab-' + t }, t[0].toUpperCase() + t.slice(1))));
  const pane = h('section', { id: 'pane' });
  main.replaceChildren(h('h1', {}, ws, readOnly ? h('span', { class: 'badge', id: 'read-only' }, 'read-only') : null), tabs, pane);
  const view = { files: filesTab, checkpoints: checkpointsTab, forks: forksTab, audit: auditTab, mounts: mountsTab }[tab];
  return view(pane, ws, readOnly, rest) || { close() {} };
}

// ---- the change feed --------------------------------------------------

// follow reads the workspace's Server-Sent Events with fetch (an
// EventSource cannot send the bearer token), reconnecting with
// Last-Event-ID. onEvent gets each event's parsed data (null when the
// server says the position is too old and everything should be re-read).
// onState hears whether the feed is live.
function follow(ws, onEvent, onState) {
  const ctl = new AbortController();
  let last = '';
  let resumed = false; // a ready event after the first means a reconnect
  let delay = 500;
  (async () => {
    while (!ctl.signal.aborted) {
      try {
        const headers = last ? { 'Last-Event-ID': last, Accept: 'text/event-stream' } : { Accept: 'text/event-stream' };
        const r = await api('GET', wsURL(ws) + '/events', { raw: true, headers, signal: ctl.signal });
        onState(true);
        delay = 500;
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let id = '', event = 'message', data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('id:')) id = line.slice(3).trim();
              else if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(5).trimStart();
            }
            if (id) last = id;
            if (!data) continue; // a comment or heartbeat
            if (event === 'ready') { if (resumed) onEvent(null); resumed = true; continue; } // after a gap: re-read
            if (event === 'error') { last = ''; onEvent(null); continue; } // e.g. too old: start afresh from now
            let parsed = {};
            try { parsed = JSON.parse(data); } catch { /* not JSON: refresh everything */ }
            onEvent(parsed);
          }
        }
      } catch (ex) {
        if (ctl.signal.aborted) return;
        if (ex.status === 404 || ex.status === 405) { onState(false); return; } // no feed on this server
        if (ex.status && last) { last = ''; onEvent(null); } // the position was refused (too old): afresh
      }
      onState(false);
      await new Promise((res) => setTimeout(res, delay));
      delay = Math.min(delay * 2, 10000);
    }
  })();
  return () => ctl.abort();
}

// changedPaths finds the paths an event names, whatever the field.
function changedPaths(ev) {
  const out = [];
  for (const k of ['changed', 'paths']) if (Array.isArray(ev[k])) out.push(...ev[k]);
  for (const k of ['path', 'old_path']) if (typeof ev[k] === 'string') out.push(ev[k]);
  return out.map((p) => p.replace(/^\/+/, ''));
}

// ---- files ------------------------------------------------------------

const parentOf = (p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const baseOf = (p) => p.slice(p.lastIndexOf('/') + 1);
const join = (dir, name) => (dir ? dir + '/' + name : name);

function filesTab(pane, ws, readOnly) {
  const cacheKey = 'fks.tree.' + ws;
  const st = {
    dirs: new Map(), // dir → { entries: [Entry], next }: the last confirmed listing
    open: new Set(['']),
    selected: '',
    pending: new Map(), // id → optimistic change not yet confirmed
    gen: new Map(), // dir → count of local changes begun or ended there
    inflight: new Map(), // dir → the listing under way (deduplicated)
    again: new Set(), // dirs whose listing must be redone once it ends
    renaming: '',
    armed: '', // the path whose Delete was pressed once
  };
  let seq = 0;
  let closed = false;
  const bump = (dir) => st.gen.set(dir, (st.gen.get(dir) || 0) + 1);

  try {
    const cached = JSON.parse(sessionStorage.getItem(cacheKey) || 'null');
    if (cached) {
      for (const [d, v] of cached.dirs) st.dirs.set(d, v);
      for (const d of cached.open) st.open.add(d);
    }
  } catch { /* a damaged cache is ignored */ }
  const save = () => {
    try {
      sessionStorage.setItem(cacheKey, JSON.stringify({ dirs: [...st.dirs], open: [...st.open] }));
    } catch { /* storage full: the cache is only a speed-up */ }
  };

  const tree = h('ul', { class: 'tree', role: 'tree', id: 'tree', 'aria-label': 'Files', onkeydown: treeKeys });
  const preview = h('div', { class: 'preview', id: 'preview', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Select a file to preview it.'));
  const status = h('span', { class: 'muted', id: 'files-status', role: 'status' });
  const picker = h('input', { type: 'file', multiple: true, hidden: true, id: 'upload-files', onchange: () => { upload([...picker.files].map((f) => [f.name, f])); picker.value = ''; } });
  const folderPicker = h('input', { type: 'file', multiple: true, hidden: true, webkitdirectory: true, id: 'upload-folder', onchange: () => { upload([...folderPicker.files].map((f) => [f.webkitRelativePath || f.name, f])); folderPicker.value = ''; } });
  const newDir = h('input', { type: 'text', id: 'mkdir-name', placeholder: 'new folder', 'aria-label': 'New folder name' });
  const drop = h('div', { class: 'drop', id: 'drop' }, 'Drop files or folders here to upload them into ', h('code', { id: 'drop-target' }, '/'));
  const toolbar = readOnly ? h('div', { class: 'row' }, status) : h('div', { class: 'row' },
    h('button', { type: 'button', onclick: () => picker.click() }, 'Upload files'),
    h('button', { type: 'button', onclick: () => folderPicker.click() }, 'Upload folder'),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (newDir.value.trim()) mkdir(join(targetDir(), newDir.value.trim())); newDir.value = ''; } },
      newDir, h('button', { type: 'submit' }, 'New folder')),
    h('button', { type: 'button', id: 'refresh', onclick: () => refreshAll() }, 'Refresh'),
    status, picker, folderPicker);
  pane.replaceChildren(toolbar, readOnly ? '' : drop, h('div', { class: 'files' }, h('div', {}, tree), preview));

  // The directory uploads and new folders go to: the selected one, or the
  // selected file's.
  function targetDir() {
    const e = findEntry(st.selected);
    if (st.selected === '' || (e && e.type === 'dir')) return st.selected;
    return parentOf(st.selected);
  }
  function findEntry(p) {
    const d = st.dirs.get(parentOf(p));
    return d && d.entries.find((e) => e.name === baseOf(p));
  }

  // listing deduplicates: one request per directory at a time. An answer
  // is applied only if no local change began or ended in that directory
  // while it was under way (it might predate the change); otherwise the
  // directory is listed again.
  function list(dir) {
    if (st.inflight.has(dir)) { st.again.add(dir); return st.inflight.get(dir); }
    const gen0 = st.gen.get(dir) || 0;
    const p = (async () => {
      try {
        let entries = [];
        let cursor = '';
        for (;;) {
          const page = await api('GET', wsURL(ws) + '/dir/' + encPath(dir) + '?limit=1000' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
          entries = entries.concat(page.entries || []);
          if (!page.next) break;
          cursor = page.next;
        }
        if ((st.gen.get(dir) || 0) !== gen0) { st.again.add(dir); return; }
        st.dirs.set(dir, { entries });
        save();
      } catch (ex) {
        if (ex.code === 'not_found' && dir) { st.dirs.delete(dir); st.open.delete(dir); save(); } else toast(ex.message);
      } finally {
        st.inflight.delete(dir);
        render();
        if (st.again.delete(dir) && !closed) list(dir);
      }
    })();
    st.inflight.set(dir, p);
    return p;
  }
  const refreshAll = () => Promise.all([...st.open].map(list));

  // The rows of a directory: the confirmed listing with the pending changes
  // laid over it, so an optimistic change shows at once and an older
  // listing never hides it.
  function rows(dir) {
    const byName = new Map((st.dirs.get(dir)?.entries || []).map((e) => [e.name, { ...e }]));
    for (const op of st.pending.values()) {
      if (op.kind === 'delete' && parentOf(op.path) === dir) byName.delete(baseOf(op.path));
      if (op.kind === 'rename') {
        if (parentOf(op.from) === dir) byName.delete(baseOf(op.from));
        if (parentOf(op.to) === dir) byName.set(baseOf(op.to), { ...(op.entry || { type: 'file' }), name: baseOf(op.to), op });
      }
      if ((op.kind === 'upload' || op.kind === 'mkdir') && parentOf(op.path) === dir) {
        const old = byName.get(baseOf(op.path));
        byName.set(baseOf(op.path), { ...(old || {}), name: baseOf(op.path), type: op.kind === 'mkdir' ? 'dir' : 'file', size: op.total ?? old?.size, op });
      }
    }
    return [...byName.values()].sort((a, b) => (b.type === 'dir') - (a.type === 'dir') || a.name.localeCompare(b.name));
  }

  // render redraws the tree, keeping the focus on the row that had it.
  function render() {
    if (closed) return;
    const focused = tree.contains(document.activeElement) ? document.activeElement.dataset.path : undefined;
    tree.replaceChildren(node({ name: '/', type: 'dir' }, ''));
    if (focused !== undefined) tree.querySelector(`[data-path="${CSS.escape(focused)}"]`)?.focus();
    const target = $('#drop-target');
    if (target) target.textContent = '/' + targetDir();
    const busy = st.pending.size;
    status.textContent = busy ? busy + ' change' + (busy > 1 ? 's' : '') + ' pending…' : '';
    tree.setAttribute('aria-busy', String(busy > 0 || st.inflight.size > 0));
  }

  function node(e, p) {
    const isDir = e.type === 'dir';
    const open = isDir && st.open.has(p);
    const op = e.op;
    const nameBtn = h('button', { type: 'button', class: 'name', 'data-path': p, role: 'treeitem', 'aria-expanded': isDir ? String(open) : null, 'aria-selected': String(st.selected === p),
      onclick: () => select(p, e) }, (isDir ? (open ? '▾ ' : '▸ ') : '  ') + (p === '' ? '/' : e.name) + (e.type === 'symlink' ? ' → ' + (e.target || '') : ''));
    let label = nameBtn;
    if (st.renaming === p && p !== '') {
      const input = h('input', { type: 'text', value: e.name, 'aria-label': 'New name for ' + e.name, id: 'rename-input', onkeydown: (ev) => {
        if (ev.key === 'Enter') { ev.preventDefault(); st.renaming = ''; const to = input.value.trim(); if (to && to !== e.name) rename(p, join(parentOf(p), to), e); else render(); }
        if (ev.key === 'Escape') { st.renaming = ''; render(); }
      } });
      label = input;
      queueMicrotask(() => { input.focus(); input.select(); });
    }
    const acts = h('span', { class: 'acts' });
    if (op) acts.append(op.kind === 'upload' && !op.error ? h('progress', { max: op.total || 1, value: op.loaded || 0, 'aria-label': 'Uploading ' + e.name }) : '', h('span', { class: 'badge ' + (op.error ? 'failed' : 'pending') }, op.error ? 'failed' : 'pending'));
    else if (p !== '') {
      if (!isDir) acts.append(h('button', { type: 'button', title: 'Download', onclick: () => download(ws, p).catch((ex) => toast(ex.message)) }, 'Download'));
      if (!readOnly) acts.append(
        h('button', { type: 'button', onclick: () => { st.renaming = p; render(); } }, 'Rename'),
        deleteButton(p, e));
    }
    const li = h('li', { role: 'none' }, h('div', { class: 'node' + (op ? ' pending' : '') + (st.selected === p ? ' selected' : ''), 'data-row': p },
      label, !isDir && e.size !== undefined ? h('span', { class: 'size' }, fmtBytes(e.size)) : '', acts));
    if (open) {
      const kids = rows(p);
      const ul = h('ul', { class: 'tree', role: 'group' }, kids.map((k) => node(k, join(p, k.name))));
      if (!st.dirs.has(p)) ul.append(h('li', { class: 'muted' }, 'Loading…'));
      else if (!kids.length) ul.append(h('li', { class: 'muted' }, '(empty)'));
      li.append(ul);
    }
    return li;
  }

  // The delete button asks once more; the armed state lives in st, so a
  // redraw between the two presses (a live update) keeps it.
  function deleteButton(p, e) {
    const armed = st.armed === p;
    return h('button', { type: 'button', class: 'danger', onclick: () => {
      if (st.armed !== p) {
        st.armed = p;
        clearTimeout(st.armTimer);
        st.armTimer = setTimeout(() => { st.armed = ''; render(); }, 4000);
        render();
        return;
      }
      st.armed = '';
      remove(p, e);
    } }, armed ? 'Confirm delete' : 'Delete');
  }

  function select(p, e) {
    st.selected = p;
    if (e.type === 'dir') {
      if (st.open.has(p) && p !== '') st.open.delete(p); else { st.open.add(p); list(p); }
      save();
    } else if (!e.op) showFile(p, e);
    render();
    const btn = tree.querySelector(`[data-path="${CSS.escape(p)}"]`);
    if (btn) btn.focus();
  }

  async function showFile(p, e) {
    preview.replaceChildren(h('p', { class: 'muted' }, 'Loading ' + p + '…'));
    try {
      const r = await api('GET', fileURL(ws, p), { raw: true, headers: { Range: 'bytes=0-262143' } });
      const blob = await r.blob();
      if (st.selected !== p) return;
      const head = h('div', { class: 'row' }, h('strong', {}, p), h('span', { class: 'muted' }, fmtBytes(e.size) + ' · ' + fmtTime(e.mtime)));
      if (/\.(png|jpe?g|gif|webp|svg)$/i.test(p) && blob.size === e.size) {
        preview.replaceChildren(head, h('img', { src: URL.createObjectURL(blob), alt: p, style: 'max-width:100%' }));
        return;
      }
      const bytes = new Uint8Array(await blob.arrayBuffer());
      if (bytes.subarray(0, 8000).includes(0)) {
        preview.replaceChildren(head, h('p', { class: 'muted' }, 'Binary file.'));
        return;
      }
      const text = new TextDecoder().decode(bytes);
      preview.replaceChildren(head, h('pre', { id: 'preview-text' }, text), blob.size < e.size ? h('p', { class: 'muted' }, 'First 256 KiB shown; download for the rest.') : '');
    } catch (ex) {
      preview.replaceChildren(h('p', { class: 'muted' }, ex.message));
    }
  }

  // change runs one optimistic change: op shows at once, the request runs,
  // then the confirmed result replaces op (or op goes and the error shows,
  // leaving the server's state on screen).
  async function change(op, dirs, request, confirm) {
    const id = ++seq;
    st.pending.set(id, op);
    dirs.forEach(bump);
    render();
    try {
      const res = await request();
      confirm(res);
    } catch (ex) {
      toast(ex.message);
    } finally {
      st.pending.delete(id);
      dirs.forEach(bump);
      save();
      render();
      dirs.forEach((d) => { if (st.open.has(d)) list(d); });
    }
  }
  // place puts a confirmed entry into the cached listing of its directory.
  function place(p, entry) {
    const d = st.dirs.get(parentOf(p));
    if (!d) return;
    d.entries = d.entries.filter((x) => x.name !== baseOf(p));
    if (entry) d.entries.push({ ...entry, name: baseOf(p) });
  }

  function rename(from, to, e) {
    change({ kind: 'rename', from, to, entry: e }, [...new Set([parentOf(from), parentOf(to)])],
      () => api('POST', wsURL(ws) + '/rename', { json: { from, to } }),
      () => { place(from, null); place(to, { ...e }); if (st.selected === from) st.selected = to; });
  }
  function remove(p, e) {
    change({ kind: 'delete', path: p }, [parentOf(p)],
      () => api('DELETE', fileURL(ws, p) + (e.type === 'dir' ? '?recursive=true' : '')),
      () => { place(p, null); if (st.selected === p) st.selected = ''; });
  }
  function mkdir(p) {
    st.open.add(parentOf(p));
    change({ kind: 'mkdir', path: p }, [parentOf(p)],
      () => api('POST', wsURL(ws) + '/mkdir', { json: { path: p, parents: true } }),
      () => place(p, { type: 'dir', name: baseOf(p) }));
  }

  // upload sends [relative path, File] pairs into the target directory:
  // folders first (with their parents), then the files, four at a time,
  // each a pending row with a progress bar until the server confirms it.
  async function upload(items) {
    if (!items.length) return;
    const base = targetDir();
    st.open.add(base);
    const dirs = new Set();
    for (const [rel] of items) {
      const parts = rel.split('/').filter(Boolean);
      for (let i = 1; i < parts.length; i++) dirs.add(join(base, parts.slice(0, i).join('/')));
    }
    for (const d of [...dirs].sort()) {
      try { await api('POST', wsURL(ws) + '/mkdir', { json: { path: d, parents: true } }); } catch (ex) { toast(ex.message); return; }
    }
    if (dirs.size) list(base);
    const queue = items.map(([rel, file]) => [join(base, rel.split('/').filter(Boolean).join('/')), file]);
    const worker = async () => {
      while (queue.length) {
        const [p, file] = queue.shift();
        const op = { kind: 'upload', path: p, loaded: 0, total: file.size };
        await change(op, [parentOf(p)],
          () => putFile(ws, p, file, (loaded, total) => { op.loaded = loaded; op.total = total; render(); }),
          (entry) => place(p, entry));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }

  // Drag and drop, folders included (webkitGetAsEntry walks them).
  async function entriesOf(dt) {
    const out = [];
    const walk = async (entry, prefix) => {
      if (entry.isFile) {
        out.push([prefix + entry.name, await new Promise((res, rej) => entry.file(res, rej))]);
      } else if (entry.isDirectory) {
        const reader = entry.createReader();
        for (;;) {
          const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
          if (!batch.length) break;
          for (const c of batch) await walk(c, prefix + entry.name + '/');
        }
      }
    };
    const roots = [...dt.items].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
    if (!roots.length) return [...dt.files].map((f) => [f.name, f]);
    for (const r of roots) await walk(r, '');
    return out;
  }
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    if (!readOnly) upload(await entriesOf(e.dataTransfer));
  });

  // Keyboard: arrows move between rows, right/left open and close a
  // folder, F2 renames, Delete deletes (after the confirm press).
  function treeKeys(e) {
    if (e.target.tagName === 'INPUT') return;
    const items = [...tree.querySelectorAll('button.name')];
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    const p = items[i].dataset.path;
    const move = (j) => { if (items[j]) { e.preventDefault(); items[j].focus(); } };
    if (e.key === 'ArrowDown') move(i + 1);
    else if (e.key === 'ArrowUp') move(i - 1);
    else if (e.key === 'ArrowRight' && !st.open.has(p) && (p === '' || findEntry(p)?.type === 'dir')) { e.preventDefault(); select(p, { type: 'dir' }); }
    else if (e.key === 'ArrowLeft' && st.open.has(p) && p !== '') { e.preventDefault(); select(p, { type: 'dir' }); }
    else if (e.key === 'F2' && !readOnly && p !== '') { e.preventDefault(); st.renaming = p; render(); }
  }

  // Live updates: the change feed names what changed; refresh the open
  // directories it touches. Focus, visibility and the Refresh button are
  // the fallback when no feed is reachable.
  const stop = follow(ws, (ev) => {
    if (!ev) { refreshAll(); return; }
    const ps = changedPaths(ev);
    if (!ps.length) { refreshAll(); return; }
    const dirs = new Set();
    for (const p of ps) { dirs.add(parentOf(p)); if (st.open.has(p)) dirs.add(p); }
    for (const d of dirs) if (st.open.has(d)) list(d);
  }, (live) => { const el = $('#live'); el.hidden = false; el.classList.toggle('off', !live); el.textContent = live ? 'live' : 'not live'; });
  const onFocus = () => refreshAll();
  const onVisible = () => { if (document.visibilityState === 'visible') refreshAll(); };
  window.addEventListener('focus', onFocus);
  document.addEventListener('visibilitychange', onVisible);

  render(); // the cached tree, at once
  if (st.dirs.size) performance.mark('fks-cached-paint'); // measured by the browser test
  refreshAll(); // then revalidated
  return {
    close() {
      closed = true;
      stop();
      $('#live').hidden = true;
      window.removeEventListener('focus', onFocus);
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
}

// ---- checkpoints and diffs --------------------------------------------

function checkpointsTab(pane, ws, readOnly) {
  const list = h('ol', { class: 'timeline', id: 'timeline' });
  const diff = h('div', { id: 'diff' });
  const label = h('input', { type: 'text', id: 'cp-label', placeholder: 'label (optional)', 'aria-label': 'Checkpoint label' });
  pane.replaceChildren(
    readOnly ? '' : h('form', { class: 'row', onsubmit: async (e) => {
      e.preventDefault();
      try { await api('POST', wsURL(ws) + '/checkpoints', { json: { label: label.value.trim() } }); label.value = ''; load(); } catch (ex) { toast(ex.message); }
    } }, label, h('button', { type: 'submit' }, 'Checkpoint now')),
    list, diff);
  async function load() {
    try {
      const cps = (await api('GET', wsURL(ws) + '/checkpoints')) || [];
      list.replaceChildren(...cps.slice().reverse().map((c) => {
        const ref = ws.split('@')[0] + '@' + (c.label || c.id);
        return h('li', { 'data-checkpoint': c.label || c.id },
          h('strong', {}, c.label || c.id), ' ', h('span', { class: 'muted' }, fmtTime(c.created_at)),
          h('div', { class: 'row' },
            h('button', { type: 'button', onclick: () => showDiff(diff, ref, ws.split('@')[0]) }, 'Diff with head'),
            h('a', { href: '#/ws/' + encodeURIComponent(ref) + '/files' }, 'Browse'),
            readOnly ? '' : confirmButton('Restore', async () => {
              try {
                await api('POST', wsURL(ws) + '/restore', { json: { checkpoint: c.id } });
                sessionStorage.removeItem('fks.tree.' + ws);
                toast('Restored ' + (c.label || c.id) + '.', 'info');
                load();
              } catch (ex) { toast(ex.message); }
            }, 'danger restore')));
      }));
      if (!cps.length) list.replaceChildren(h('li', { class: 'muted' }, 'No checkpoints yet.'));
    } catch (ex) { toast(ex.message); }
  }
  load();
}

// showDiff shows the changes from one state to another, unified or side by
// side (both drawn from the server's unified text).
async function showDiff(el, from, to) {
  el.replaceChildren(h('p', { class: 'muted' }, 'Comparing…'));
  try {
    const q = '?from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to);
    const [changes, text] = await Promise.all([api('GET', '/v1/diff' + q), api('GET', '/v1/diff' + q + '&format=unified')]);
    let mode = 'unified';
    const body = h('div', { class: 'diff' });
    const draw = () => body.replaceChildren(mode === 'unified' ? unified(text) : sideBySide(text));
    const toggle = h('button', { type: 'button', id: 'diff-mode', onclick: () => { mode = mode === 'unified' ? 'split' : 'unified'; toggle.textContent = mode === 'unified' ? 'Side by side' : 'Unified'; draw(); } }, 'Side by side');
    el.replaceChildren(
      h('h2', {}, from + ' → ' + to),
      h('div', { class: 'row' }, h('span', { class: 'muted' }, (changes || []).length + ' change(s)'), toggle),
      h('ul', {}, (changes || []).map((c) => h('li', {}, c.op + ' ' + (c.old_path ? c.old_path + ' → ' : '') + c.path))),
      body);
    draw();
  } catch (ex) {
    el.replaceChildren(h('p', { class: 'muted' }, ex.message));
  }
}

function unified(text) {
  return h('pre', { id: 'diff-unified' }, (text || '').split('\n').map((l) => h('div', {
    class: l.startsWith('+++') || l.startsWith('---') ? '' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : l.startsWith('@@') ? 'hunk' : '',
  }, l || ' ')));
}

function sideBySide(text) {
  const grid = h('div', { class: 'sbs', id: 'diff-split' });
  let dels = [], adds = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
      grid.append(h('div', { class: dels[i] !== undefined ? 'del' : '' }, dels[i] ?? ''), h('div', { class: adds[i] !== undefined ? 'add' : '' }, adds[i] ?? ''));
    }
    dels = []; adds = [];
  };
  for (const l of (text || '').split('\n')) {
    if (l.startsWith('---') || l.startsWith('+++') || l.startsWith('diff ')) { flush(); grid.append(h('div', { class: 'hunk' }, l), h('div', { class: 'hunk' }, '')); continue; }
    if (l.startsWith('@@')) { flush(); grid.append(h('div', { class: 'hunk' }, l), h('div', { class: 'hunk' }, l)); continue; }
    if (l.startsWith('-')) { dels.push(l.slice(1)); continue; }
    if (l.startsWith('+')) { adds.push(l.slice(1)); continue; }
    flush();
    grid.append(h('div', {}, l.slice(1)), h('div', {}, l.slice(1)));
  }
  flush();
  return grid;
}

// ---- forks ------------------------------------------------------------

function forksTab(pane, ws, readOnly) {
  const name = h('input', { type: 'text', id: 'fork-name', placeholder: 'fork name', 'aria-label': 'Fork name' });
  const treeEl = h('div', { id: 'forktree' });
  const diff = h('div');
  pane.replaceChildren(
    !can('write') ? '' : h('form', { class: 'row', onsubmit: async (e) => {
      e.preventDefault();
      try { await api('POST', wsURL(ws) + '/fork', { json: { name: name.value.trim() } }); name.value = ''; load(); } catch (ex) { toast(ex.message); }
    } }, name, h('button', { type: 'submit' }, 'Fork')),
    treeEl, diff);
  async function load() {
    try {
      const all = await listAll('/v1/workspaces', 'workspaces');
      const byID = new Map(all.map((w) => [w.id, w]));
      const me = all.find((w) => w.name === ws.split('@')[0]);
      if (!me) { treeEl.replaceChildren(h('p', { class: 'muted' }, 'Not found.')); return; }
      let root = me;
      const seen = new Set();
      while (root.parent_id && byID.has(root.parent_id) && !seen.has(root.id)) { seen.add(root.id); root = byID.get(root.parent_id); }
      const kids = new Map();
      for (const w of all) if (w.parent_id) kids.set(w.parent_id, [...(kids.get(w.parent_id) || []), w]);
      const draw = (w, depth) => h('li', { 'data-fork': w.name },
        h('a', { href: '#/ws/' + encodeURIComponent(w.name), class: w.id === me.id ? 'here' : '' }, w.name),
        ' ', h('span', { class: 'muted' }, fmtTime(w.created_at)),
        w.parent_id && byID.has(w.parent_id) ? [' ', h('button', { type: 'button', onclick: () => showDiff(diff, byID.get(w.parent_id).name, w.name) }, 'Diff with parent')] : '',
        depth < 64 && kids.has(w.id) ? h('ul', { class: 'forktree' }, kids.get(w.id).map((k) => draw(k, depth + 1))) : '');
      treeEl.replaceChildren(h('ul', { class: 'forktree' }, draw(root, 0)));
    } catch (ex) { toast(ex.message); }
  }
  load();
}

// ---- audit and mounts -------------------------------------------------

function auditTab(pane, ws) {
  const body = h('tbody', { id: 'audit' });
  pane.replaceChildren(h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'When'), h('th', {}, 'Call'), h('th', { class: 'hide-narrow' }, 'Actor'), h('th', {}, 'Changed'), h('th', {}, 'Result'))), body));
  api('GET', '/v1/audit?limit=200&workspace=' + encodeURIComponent(ws.split('@')[0])).then((es) => {
    body.replaceChildren(...(es || []).map((e) => h('tr', {},
      h('td', {}, fmtTime(e.time)), h('td', {}, e.tool), h('td', { class: 'hide-narrow' }, e.actor || ''),
      h('td', {}, (e.changed || []).slice(0, 5).join(', ') + ((e.changed || []).length > 5 ? ' …' : '')),
      h('td', {}, e.error ? h('span', { class: 'badge failed' }, e.error) : (e.detail || 'ok')))));
    if (!(es || []).length) body.replaceChildren(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'Nothing recorded yet.')));
  }).catch((ex) => toast(ex.message));
}

function mountsTab(pane, ws, readOnly) {
  const body = h('tbody', { id: 'mounts' });
  pane.replaceChildren(h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Root'), h('th', {}, 'Source'), h('th', {}, 'State'), h('th', {}, ''))), body));
  const act = (action, root) => api('POST', wsURL(ws) + '/mounts/' + action, { json: { root } }).then(load).catch((ex) => toast(ex.message));
  function load() {
    api('GET', wsURL(ws) + '/mounts').then((ms) => {
      body.replaceChildren(...(ms || []).map((m) => h('tr', {},
        h('td', {}, m.root), h('td', {}, m.source || '(in code)'),
        h('td', {}, (m.conflicts || []).length ? h('span', { class: 'badge failed' }, m.conflicts.length + ' conflict(s)') : (m.pending || []).length ? h('span', { class: 'badge pending' }, m.pending.length + ' pending') : 'in sync'),
        h('td', {}, readOnly ? '' : [h('button', { type: 'button', onclick: () => act('flush', m.root) }, 'Flush'), ' ', h('button', { type: 'button', onclick: () => act('refresh', m.root) }, 'Refresh')]))));
      if (!(ms || []).length) body.replaceChildren(h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'No mounts.')));
    }).catch((ex) => toast(ex.message));
  }
  load();
}

// ---- start ------------------------------------------------------------

$('#signout').addEventListener('click', () => {
  for (const k of Object.keys(sessionStorage)) if (k.startsWith('fks.')) sessionStorage.removeItem(k);
  location.hash = '#/signin';
  location.reload(); // forget the scope along with the token and every cached listing
});
window.addEventListener('hashchange', route);
route();
