/*
 * The dashboard: plain JavaScript, no build step. It reads the API's own
 * documents (docs/API.md): a snapshot and then changes from the event
 * stream GET /api/v1/events, or, where a stream cannot be had (the
 * server's bound on streams, a proxy that buffers), the same documents
 * polled every POLL_MS.
 */
'use strict';

const POLL_MS = 2000;
const CHARTS = ['timeline', 'distribution', 'compare', 'posterior'];
const LIVE_STATES = ['queued', 'running'];

const state = {
	agents: new Map(),    // name -> agent
	jobs: new Map(),      // id -> job (list form)
	job: null,            // the job page's job (full form)
	jobId: null,
	samples: null,        // the job page's runs
	samplesRuns: -1,      // progress.runs when they were fetched
	skew: 0,              // server clock - ours, seconds
	mode: 'off',
	token: null,          // the API token writes send (sessionStorage, or localStorage when remembered)
	role: null,           // its role, as GET /api/v1/whoami says
	open: false,          // bisectd checks no tokens (auth: none)
};

const TOKEN_KEY = 'bisectd.token';

/* --- small helpers ------------------------------------------------------ */

const $ = (sel) => document.querySelector(sel);

function esc(v) {
	return String(v == null ? '' : v).replace(/[&<>"']/g, (c) => ({
		'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
	})[c]);
}

const short = (sha) => (sha ? String(sha).slice(0, 12) : '');
const now = () => Date.now() / 1000 + state.skew;

function ago(t) {
	if (!t) return '';
	const s = Math.max(0, Math.round(now() - t));
	return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : `${Math.floor(s / 3600)} h ago`;
}

function duration(s) {
	if (s == null) return '';
	s = Math.max(0, Math.round(s));
	const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
	return h ? `${h}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}` : `${m}:${String(r).padStart(2, '0')}`;
}

// A measurement: 1877 as it is, 172480905 as 172.48M (5 digits, a prefix as the charts' axes have), not 1.725e+8.
function num(v) {
	if (v == null) return '';
	const a = Math.abs(v);
	if (a >= 1e5) {
		const k = Math.min(4, Math.floor(Math.log10(a) / 3));
		return `${(v / 10 ** (3 * k)).toPrecision(5)}${'-KMGT'[k]}`;
	}
	return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

const pct = (p) => (p == null ? '' : `${(100 * p).toFixed(p > 0.999 ? 2 : 1)}%`);
const badge = (s, cls) => `<span class="badge ${cls || 'state-' + esc(s)}">${esc(s)}</span>`;

function elapsed(j) {
	if (!j.created) return null;
	if (j.finished) return j.finished - j.created;
	return LIVE_STATES.includes(j.state) ? now() - j.created : (j.progress || {}).elapsed_seconds;
}

/* The API's answer as {status, body}; body the parsed JSON, or the text. */
async function api(method, path, body) {
	const opts = { method, headers: {} };
	if (method !== 'GET') opts.headers['Content-Type'] = 'application/json';
	if (body !== undefined) opts.body = JSON.stringify(body);
	if (state.token) opts.headers.Authorization = `Bearer ${state.token}`;
	const r = await fetch(path, opts);
	const text = await r.text();
	let data = text;
	try { data = text ? JSON.parse(text) : null; } catch (e) { /* text/plain */ }
	return { status: r.status, body: data };
}

const errorOf = (a) => (a.body && a.body.error) || `HTTP ${a.status}`;

/* --- the token: read-only without one ------------------------------------ */

const canWrite = () => state.open || state.role === 'admin' || state.role === 'submit';

function renderAuth() {
	$('#auth-who').textContent = state.open ? 'no tokens (auth: none)' : state.role ? `token: ${state.role}` : 'read-only';
	$('#token-ask').hidden = !!state.role || state.open;
	$('#token-forget').hidden = !state.token;
	$('#submit-form').hidden = !canWrite();
	$('#submit-locked').hidden = canWrite();
}

function askToken(why) {
	$('#token-form').hidden = false;
	$('#token-error').textContent = why || '';
	$('#token-error').hidden = !why;
	$('#token-input').focus();
}

/* Tries a token: kept only when bisectd knows it and it may submit or cancel. */
async function useToken(tok, remember) {
	const old = state.token;
	state.token = tok;
	const a = await api('GET', '/api/v1/whoami').catch((e) => ({ status: 0, body: { error: e.message } }));
	const role = a.status === 200 && a.body ? a.body.role : null;
	if (a.status === 200 && !role) {  // auth: none: no token needed
		state.token = null;
		state.open = true;
		$('#token-form').hidden = true;
		renderAuth();
		render();
		return true;
	}
	if (a.status !== 200 || (role !== 'admin' && role !== 'submit')) {
		state.token = old;
		askToken(a.status === 200 ? `this token is role ${role}: submitting needs submit or admin` :
			`bisectd refused the token: ${errorOf(a)}`);
		return false;
	}
	state.role = role;
	sessionStorage.setItem(TOKEN_KEY, tok);
	if (remember) localStorage.setItem(TOKEN_KEY, tok);
	$('#token-form').hidden = true;
	$('#token-input').value = '';
	renderAuth();
	render();
	return true;
}

function forgetToken() {
	state.token = state.role = null;
	sessionStorage.removeItem(TOKEN_KEY);
	localStorage.removeItem(TOKEN_KEY);
	renderAuth();
	render();
}

/* A write the API refused: its status and message in where; one refused for want of a (good) token asks for one. */
function showRefusal(where, a) {
	where.textContent = `${a.status}: ${errorOf(a)}`;
	where.hidden = false;
	if (a.status === 401 || a.status === 403) askToken(errorOf(a));
}

/* --- the home page -------------------------------------------------------- */

function renderAgents() {
	const rows = [...state.agents.values()].sort((a, b) => a.name.localeCompare(b.name));
	$('#agents-empty').hidden = rows.length > 0;
	$('#agents tbody').innerHTML = rows.map((a) => {
		const commit = a.commit_sha ? `<span class="sha" title="${esc(a.commit_subject)}">${short(a.commit_sha)}</span>` +
			(a.idx != null ? ` <span class="progress">#${esc(a.idx)}</span>` : '') : '';
		return `<tr data-agent="${esc(a.name)}">
			<td>${esc(a.name)}</td>
			<td>${(a.labels || []).map(esc).join(', ')}</td>
			<td class="state">${badge(a.state)}</td>
			<td class="job">${a.job ? `<a href="/jobs/${esc(a.job)}">${esc(a.job)}</a>` : ''}</td>
			<td class="commit">${commit}</td>
			<td class="phase">${a.phase ? badge(a.phase, 'phase-' + esc(a.phase)) : ''}</td>
			<td class="progress">${esc(a.progress || '')}</td>
			<td class="seen" data-t="${esc(a.last_seen)}">${ago(a.last_seen)}</td>
			<td class="num done">${esc(a.tasks_done ?? '')}</td>
			<td class="num failed">${esc(a.tasks_failed ?? '')}</td></tr>`;
	}).join('');
}

function bestCell(j) {
	const b = j.best;
	if (j.culprit && j.culprit.sha) return `<span class="sha">${short(j.culprit.sha)}</span> culprit`;
	if (!b || !b.sha) return '';
	return `<span class="sha" title="${esc(b.subject)}">${short(b.sha)}</span> ${pct(b.p)}`;
}

function cancelButton(j) {
	return LIVE_STATES.includes(j.state) && canWrite() ? `<button class="cancel" data-cancel="${esc(j.id)}">cancel</button>` : '';
}

/* An undecided job runs on with more runs (POST .../resume), a cancelled one as it was, every run it has kept. */
function resumeButton(j) {
	if (!canWrite()) return '';
	if (j.state === 'undecided')
		return `<button class="resume" data-resume="${esc(j.id)}" title="run on from the runs it has, its budgets raised">more runs</button>`;
	if (j.state === 'cancelled')
		return `<button class="resume" data-resume="${esc(j.id)}" data-cancelled="1" title="run on from the runs it has, its budgets as they were">resume</button>`;
	return '';
}

/* An ended job measured afresh: its range by its commits and its settings, as a new job (bisectctl submit --like). */
function againButton(j) {
	return !LIVE_STATES.includes(j.state) && canWrite() ?
		`<button class="again" data-again="${esc(j.id)}" title="its range and settings again, as a new job">again</button>` : '';
}

/* The POST /api/v1/jobs body of job j's range and settings: its own budgets, not the derived ones. */
function likeBody(j) {
	const body = { repo: j.repo, good: j.good, bad: j.bad, workload: j.workload, pool: j.pool, runs: j.runs,
		policy: j.policy, confidence: j.confidence, alpha: j.alpha, min_effect: j.min_effect, direction: j.direction };
	if (j.append) body.append = j.append;
	if (j.config && j.config.length) body.config = j.config;
	for (const k of ['budget_runs', 'budget_builds', 'budget_seconds', 'end_runs'])
		if (j[k] > 0) body[k] = j[k];
	return body;
}

async function again(id, where) {
	const j = state.job && state.job.id === id ? state.job : state.jobs.get(id);
	if (!j || !window.confirm(`Submit job ${id}'s range and settings again, as a new job? ` +
		'It is measured afresh: no run of this one is carried over.')) return;
	where.hidden = true;
	const a = await api('POST', '/api/v1/jobs', likeBody(j));
	if (a.status === 201) {
		location.href = `/jobs/${a.body.id}`;
	} else {
		showRefusal(where, a);
	}
}

function renderJobs() {
	const rows = [...state.jobs.values()].sort((a, b) => b.id - a.id);
	$('#jobs-empty').hidden = rows.length > 0;
	$('#jobs tbody').innerHTML = rows.map((j) => {
		const p = j.progress || {};
		return `<tr data-job="${esc(j.id)}">
			<td><a href="/jobs/${esc(j.id)}">${esc(j.id)}</a></td>
			<td>${esc(j.repo)} <span class="sha">${esc(j.good_ref)}..${esc(j.bad_ref)}</span>
				<span class="progress">${esc(j.nr_commits)} commits</span></td>
			<td>${esc(j.workload)}</td>
			<td>${esc([j.append, ...(j.config || [])].filter(Boolean).join(' '))}</td>
			<td class="state">${badge(j.state)}</td>
			<td class="num candidates">${esc(p.candidates ?? '')}</td>
			<td class="best">${bestCell(j)}</td>
			<td class="num runs">${esc(p.runs ?? p.samples ?? '')}${p.budget_runs ? ` / ${esc(p.budget_runs)}` : ''}</td>
			<td class="num builds">${esc(p.builds ?? '')}</td>
			<td class="num elapsed" data-job="${esc(j.id)}">${duration(elapsed(j))}</td>
			<td>${cancelButton(j)}${resumeButton(j)}${againButton(j)}</td></tr>`;
	}).join('');
}

async function submit(ev) {
	ev.preventDefault();
	const f = ev.target, body = {};
	for (const el of f.elements) {
		if (!el.name || el.value.trim() === '') continue;
		body[el.name] = el.name === 'runs' ? Number(el.value) :
			el.name === 'config' ? el.value.trim().split(/\s+/) : el.value.trim();
	}
	const btn = f.querySelector('button');
	btn.disabled = true;
	$('#submit-error').hidden = true;
	$('#submit-ok').hidden = true;
	try {
		// Resolving the refs fetches the mirror first: this can take a while.
		const a = await api('POST', '/api/v1/jobs', body);
		if (a.status === 201) {
			$('#submit-ok').innerHTML = `Job <a href="/jobs/${esc(a.body.id)}">${esc(a.body.id)}</a> submitted.`;
			$('#submit-ok').hidden = false;
			state.jobs.set(a.body.id, a.body);
			renderJobs();
		} else {
			showRefusal($('#submit-error'), a);
		}
	} catch (e) {
		$('#submit-error').textContent = `bisectd did not answer: ${e.message}`;
		$('#submit-error').hidden = false;
	} finally {
		btn.disabled = false;
	}
}

/* A write on a job (cancel, resume) once confirmed: the job as answered, or the API's error in where. */
async function jobAction(id, action, question, body, where) {
	if (!window.confirm(question)) return;
	where.hidden = true;
	const a = await api('POST', `/api/v1/jobs/${id}/${action}`, body);
	if (a.status === 200) {
		state.jobs.set(a.body.id, a.body);
		if (state.job && state.job.id === a.body.id) refreshJob();
		render();
	} else {
		showRefusal(where, a);
	}
}

/* --- the job page --------------------------------------------------------- */

function commitLabel(c) {
	return c ? `<span class="sha" title="${esc(c.subject)}">${short(c.sha)}</span> ${esc(c.subject || '')}` : '';
}

function renderJobHead(j) {
	const p = j.progress || {};
	$('#job-head').innerHTML = `<h2>Job ${esc(j.id)} ${badge(j.state)} ${cancelButton(j)}${resumeButton(j)}${againButton(j)}</h2>
		<dl class="kv">
		<dt>range</dt><dd>${esc(j.repo)} <span class="sha">${esc(j.good_ref)}..${esc(j.bad_ref)}</span>
			(${esc(j.nr_commits)} commits, <span class="sha">${short(j.good)}..${short(j.bad)}</span>)</dd>
		<dt>workload</dt><dd>${esc(j.workload)} on pool ${esc(j.pool)}, ${esc(j.runs)} runs a task,
			${esc(j.direction)} ${esc(j.unit)} is better</dd>
		<dt>variant</dt><dd>${esc(j.append || 'none')}</dd>
		<dt>kernel config</dt><dd>${(j.config || []).length ? j.config.map((o) => `<code>${esc(o)}</code>`).join(' ') : 'the workload\'s'}</dd>
		<dt>policy</dt><dd>${esc(j.policy)}, confidence ${esc(j.confidence)}, alpha ${esc(j.alpha)},
			min effect ${pct(j.min_effect)}${j.end_runs ? `, ${esc(j.end_runs)} runs an end before not-reproduced` : ''}${
			j.ends_max ? `, the ends measured to ${esc(j.ends_max)} runs each at most (raised by resume)` : ''}</dd>
		<dt>progress</dt><dd class="job-progress">${esc(p.candidates ?? '?')} candidates left,
			${esc(p.runs ?? p.samples)} runs${p.budget_runs ? ` of ${esc(p.budget_runs)}` : ''},
			${esc(p.builds ?? 0)} builds, ${esc(p.tasks_done)}/${esc(p.tasks_total)} tasks,
			elapsed <span class="elapsed" data-job="${esc(j.id)}">${duration(elapsed(j))}</span></dd>
		<dt>best commit</dt><dd>${j.best && j.best.sha ? `${commitLabel(j.best)} (p ${pct(j.best.p)})` : 'none yet'}</dd>
		<dt>running</dt><dd>${(j.running || []).map((r) => `#${esc(r.idx)} on ${esc(r.agent)}: ` +
			`${esc(r.progress || 'claimed')}`).join('<br>') || 'nothing'}</dd>
		${j.waiting ? `<dt>waiting</dt><dd class="job-waiting">${esc(j.waiting)}</dd>` : ''}
		${j.error ? `<dt>error</dt><dd>${esc(j.error)}</dd>` : ''}
		</dl>`;
}

function renderCharts(j) {
	const box = $('#job-charts');
	if (box.dataset.job === String(j.id)) {
		// Only reload when the job changed: a chart is cached until then.
		const stamp = `${j.state}.${(j.progress || {}).runs}`;
		if (box.dataset.stamp === stamp) return;
		box.dataset.stamp = stamp;
		box.querySelectorAll('img').forEach((img) => {
			if (!img.dataset.missing) img.src = `${img.dataset.src}?v=${encodeURIComponent(stamp)}`;
		});
		return;
	}
	box.dataset.job = String(j.id);
	box.dataset.stamp = `${j.state}.${(j.progress || {}).runs}`;
	box.innerHTML = CHARTS.map((name) => {
		const src = `/api/v1/jobs/${j.id}/charts/${name}.svg`;
		return `<figure class="chart" data-chart="${name}">
			<figcaption><a href="${src}">${name}.svg</a></figcaption>
			<img alt="${name} chart of job ${esc(j.id)}" data-src="${src}" src="${src}">
			<p class="missing" hidden></p></figure>`;
	}).join('') + `<figure class="chart"><figcaption>Data</figcaption>
		<p><a id="csv-link" href="/api/v1/jobs/${j.id}/samples.csv">samples.csv</a> (every run: commit, task, agent,
		attempt, run, value, unit, time) &middot; <a href="/api/v1/jobs/${j.id}/samples">samples (JSON)</a>
		&middot; <a href="/api/v1/jobs/${j.id}">job (JSON)</a></p></figure>`;
	box.querySelectorAll('img').forEach((img) => {
		img.addEventListener('error', () => chartMissing(img));
	});
	checkCsv(j.id);
}

/* A chart that cannot be had says why, in place of a broken image. */
async function chartMissing(img) {
	const fig = img.closest('figure'), msg = fig.querySelector('.missing');
	let why = 'not available';
	try {
		const a = await api('GET', img.dataset.src);
		why = a.status === 200 ? 'not an image' : `${a.status}: ${errorOf(a)}`;
	} catch (e) { why = e.message; }
	img.hidden = true;
	img.dataset.missing = '1';
	msg.textContent = `No chart: ${why}`;
	msg.hidden = false;
}

/* The CSV export, or, where this bisectd has none, the same made here from the samples. */
async function checkCsv(id) {
	const a = await fetch(`/api/v1/jobs/${id}/samples.csv`, { method: 'HEAD' }).catch(() => null);
	if (a && a.ok) return;
	const link = $('#csv-link');
	if (!link) return;
	link.addEventListener('click', async (ev) => {
		ev.preventDefault();
		const s = await api('GET', `/api/v1/jobs/${id}/samples`);
		const shas = new Map(((state.job && state.job.commits) || []).map((c) => [c.idx, c.sha]));
		const lines = ['commit,idx,task,agent,attempt,run,value,unit,time'].concat((s.body.samples || []).map((x) =>
			[shas.get(x.idx) || '', x.idx, x.task, x.agent, x.attempt, x.run, x.value,
			 (state.job && state.job.unit) || '', x.created].join(',')));
		const url = URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/csv' }));
		const dl = document.createElement('a');
		dl.href = url;
		dl.download = `job-${id}-samples.csv`;
		dl.click();
		setTimeout(() => URL.revokeObjectURL(url), 1000);
	});
	link.title = 'made in the page from GET /samples (this bisectd has no CSV export)';
}

/* The runs of one commit as dots on the job's common scale, the hmean as a bar. */
function runsSvg(values, hmean, lo, hi) {
	const W = 260, H = 18, x = (v) => (hi > lo ? 4 + (W - 8) * (v - lo) / (hi - lo) : W / 2);
	const dots = values.map((v) => v > 0 ? `<circle cx="${x(v).toFixed(1)}" cy="9" r="2.6" fill="#2457c5" fill-opacity=".55"/>`
		: `<text x="2" y="13" font-size="10" fill="#b42318">&#215;</text>`).join('');
	const bar = hmean ? `<line x1="${x(hmean).toFixed(1)}" x2="${x(hmean).toFixed(1)}" y1="1" y2="17" stroke="#1d2330" stroke-width="2"/>` : '';
	return `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img"><line x1="4" x2="${W - 4}" y1="9" y2="9" stroke="#dde2ea"/>${bar}${dots}</svg>`;
}

/*
 * With two agents or more, the job's commits at the reference agent's
 * level (the report's levels, or a running job's at the engine's last
 * step): each run divided by its agent's level, each hmean of runs so
 * divided (hmean_ref). One agent: as measured.
 */
function renderCommits(j) {
	const lv = new Map(((j.agents || []).length > 1 ? j.agents : []).filter((a) => a.level_pct != null)
		.map((a) => [a.name, 1 + a.level_pct / 100]));
	const atRef = (s) => s.value > 0 ? s.value / (lv.get(s.agent) || 1) : s.value;
	const byIdx = new Map();
	for (const s of (state.samples || [])) {
		if (!byIdx.has(s.idx)) byIdx.set(s.idx, []);
		byIdx.get(s.idx).push(atRef(s));
	}
	const all = (state.samples || []).map(atRef).filter((v) => v > 0);
	$('#job-commits-levels').innerHTML = agentsLine(j, 'hmeans and runs');
	const lo = Math.min(...all), hi = Math.max(...all);
	const last = (j.commits || []).length ? j.commits[j.commits.length - 1].idx : -1;
	$('#job-commits tbody').innerHTML = (j.commits || []).map((c) => {
		const tag = c.idx === 0 ? ' (good end)' : c.idx === last ? ' (bad end)' : '';
		const culprit = j.culprit && j.culprit.idx === c.idx ? ' <strong>culprit</strong>' : '';
		return `<tr data-idx="${esc(c.idx)}"><td class="num">${esc(c.idx)}</td>
			<td class="sha">${short(c.sha)}</td><td>${esc(c.subject)}${tag}${culprit}</td>
			<td>${badge(c.state)}</td><td class="num">${esc(c.n ?? 0)}${c.failures ? ` (+${esc(c.failures)} failed)` : ''}</td>
			<td class="num">${c.hmean != null ? `${num(refHmean(c))} (${c.n > 1 ? (c.cv_ref ?? c.cv ?? 0).toFixed(4) : '-'})` : ''}</td>
			<td class="runs">${byIdx.has(c.idx) && all.length ? runsSvg(byIdx.get(c.idx), refHmean(c), lo, hi) : ''}</td></tr>`;
	}).join('');
}

function renderPosterior(j) {
	const decs = j.decisions || [];
	const top = (j.report && j.report.top) || (decs.length ? decs[decs.length - 1].top : []);
	const commits = new Map((j.commits || []).map((c) => [c.idx, c]));
	if (!top || !top.length) {
		$('#job-posterior').innerHTML = '<p class="empty">No posterior yet: the engine measures both ends first.</p>';
		return;
	}
	let mass = 0;
	const bars = top.map((t) => {
		mass += t.p || 0;
		const c = commits.get(t.idx) || t;
		return `<div class="bar"><span class="lbl">#${esc(t.idx)} ${c.sha ? `<span class="sha">${short(c.sha)}</span>` : ''}
			${esc((c.subject || '').slice(0, 40))}</span><progress max="1" value="${esc(t.p || 0)}"></progress>
			<span>${pct(t.p)}</span></div>`;
	}).join('');
	const rest = Math.max(0, (j.nr_commits || 0) - 1 - top.length);
	/* A p that more commits hold than are listed (engine "alike"): the bars are some of those. */
	const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.abs(b);
	let alike = '';
	for (const t of top) {
		const same = top.filter((u) => near(u.p, t.p));
		if (same[0] === t && t.alike > same.length)
			alike += ` ${t.alike} commits hold ${pct(t.p)} alike (no run tells them apart yet): ${same.length} of them are shown.`;
	}
	$('#job-posterior').innerHTML = `${bars}<p class="note" id="job-posterior-note">The ${top.length} most probable ` +
		`commits hold ${pct(mass)}` + (rest ? `; the other ${rest} share the rest.` : '.') + `${esc(alike)}</p>`;
}

/* A report row's hmean at the reference agent's level where the report has one (two agents or more). */
function refHmean(c) {
	return c ? (c.hmean_ref ?? c.hmean) : null;
}

/*
 * "hmeans at lab1's level: lab2 reads -12.07% against it": the agents'
 * levels a report (or a job) took out; an agent whose level is not known
 * yet (it and the reference ran no commit in common) is named as such.
 */
function agentsLine(r, what = 'hmeans') {
	if (!r.agents || r.agents.length < 2)
		return '';
	const ref = r.agents.find((a) => a.reference);
	const others = r.agents.filter((a) => !a.reference);
	const known = others.filter((a) => a.level_pct != null).map((a) => `${esc(a.name || '?')} reads ${a.level_pct.toFixed(2)}%`);
	const unknown = others.filter((a) => a.level_pct == null).map((a) => esc(a.name || '?'));
	return `<p class="agents">${what} at ${esc(ref ? ref.name : 'the reference')}'s level` +
		(known.length ? `: ${known.join(', ')} against it` : '') +
		(unknown.length ? `; ${unknown.join(', ')} at a level not known yet (no commit run by both), ` +
			'its runs as measured' : '') + '</p>';
}

function renderOutcome(j) {
	const r = j.report;
	let html;
	if (!r) {
		html = LIVE_STATES.includes(j.state) ? '<p class="empty">Still bisecting.</p>' :
			`<p>${badge(j.state)} ${esc(j.error || '')}</p>`;
	} else if (r.verdict === 'culprit' && r.culprit) {
		html = `<p>${badge('culprit', 'state-bad')} ${commitLabel(r.culprit)}</p>
			<p>${num(refHmean(r.parent))} &rarr; ${num(refHmean(r.culprit))} ${esc(j.unit)}
			(${r.change_pct != null ? r.change_pct.toFixed(1) + '%' : ''}), p ${r.p_value != null ? Number(r.p_value).toPrecision(2) : '?'},
			confidence ${pct(r.confidence)}${r.posterior != null ?
				` (capped: the runs show two modes; the model's posterior ${pct(r.posterior)})` : ''}</p>` + agentsLine(r) + slowLine(r);
	} else {
		const set = r.range && r.range.length ? r.range : r.top || [];
		html = `<p>${badge(r.verdict)} ${esc(r.why || '')}</p>` + (set.length ? `<p>${r.verdict === 'range' ?
			'The culprit is one of' : 'Most probable'}:</p><ul>${set.map((c) => `<li>${commitLabel(c)} ${pct(c.p)}</li>`).join('')}</ul>` : '') +
			(r.effect_pct != null ? `<p>effect ${r.effect_pct.toFixed(1)}% [${(r.effect_lo_pct ?? 0).toFixed(1)}%,
				${(r.effect_hi_pct ?? 0).toFixed(1)}%]${r.more_runs ? `, about ${esc(r.more_runs)} more runs would decide it` : ''}</p>` : '') +
			slowLine(r);
	}
	$('#job-outcome').innerHTML = html;
}

/* A change in the slow runs only: the job bisected on their share. */
function slowLine(r) {
	return r.slow_bad_pct != null ? `<p class="slow">the change is in the slow runs: ${r.slow_bad_pct.toFixed(0)}% of the bad group's runs,
		${(r.slow_good_pct ?? 0).toFixed(0)}% of the good group's (bisected on that share)</p>` : '';
}

function renderDecisions(j) {
	const decs = (j.decisions || []).slice(-12).reverse();
	$('#job-decisions tbody').innerHTML = decs.map((d) => `<tr>
		<td>${new Date(d.time * 1000).toLocaleTimeString()}</td><td>${badge(d.state, '')}</td>
		<td>${(d.queries || []).map((q) => `#${esc(q.idx)}&times;${esc(q.runs)}${q.confirm ? ' confirm' : ''}`).join(', ')}</td>
		<td>${(d.top || []).slice(0, 1).map((t) => `#${esc(t.idx)} ${pct(t.p)}`).join('')}</td>
		<td>${esc(d.why)}</td></tr>`).join('') || '<tr><td colspan="5" class="empty">none yet</td></tr>';
	$('#job-events').innerHTML = (j.events || []).slice(-30).reverse().map((e) =>
		`<li>${new Date(e.time * 1000).toLocaleTimeString()} <b>${esc(e.kind)}</b> ${esc(e.message)}</li>`).join('');
}

async function loadReport(j) {
	const pre = $('#job-report');
	if (LIVE_STATES.includes(j.state) || pre.dataset.state === j.state) return;
	pre.dataset.state = j.state;
	const a = await api('GET', `/api/v1/jobs/${j.id}/report`);
	pre.textContent = a.status === 200 ? a.body : `No report: ${errorOf(a)}`;
}

async function loadSamples(j) {
	const runs = (j.progress || {}).runs;
	if (runs === state.samplesRuns) return;
	state.samplesRuns = runs;
	const a = await api('GET', `/api/v1/jobs/${j.id}/samples`);
	if (a.status === 200) {
		state.samples = a.body.samples;
		if (state.job) renderCommits(state.job);
	}
}

function renderJob() {
	const j = state.job;
	if (!j) return;
	document.title = `bisectd: job ${j.id} (${j.state})`;
	renderJobHead(j);
	renderCharts(j);
	renderCommits(j);
	renderPosterior(j);
	renderOutcome(j);
	renderDecisions(j);
	loadSamples(j);
	loadReport(j);
}

async function refreshJob() {
	const a = await api('GET', `/api/v1/jobs/${state.jobId}`);
	if (a.status === 200) {
		state.job = a.body;
		$('#job-error').hidden = true;
	} else {
		$('#job-error').textContent = `${a.status}: ${errorOf(a)}`;
		$('#job-error').hidden = false;
	}
	renderJob();
}

/* --- live: events, or polling ------------------------------------------- */

function render() {
	if (state.jobId) renderJob();
	else {
		renderAgents();
		renderJobs();
	}
}

function setMode(mode, why) {
	state.mode = mode;
	const el = $('#live');
	el.className = `live ${mode === 'sse' ? 'on' : mode === 'poll' ? 'poll' : 'off'}`;
	el.textContent = mode === 'sse' ? 'live' : mode === 'poll' ? 'polling' : 'connecting';
	el.title = why || '';
	document.body.dataset.live = mode;
}

function onSnapshot(d) {
	state.skew = d.time - Date.now() / 1000;
	state.agents = new Map((d.agents || []).map((a) => [a.name, a]));
	state.jobs = new Map((d.jobs || []).map((j) => [j.id, j]));
	if (d.job) state.job = d.job;
	render();
}

function startEvents() {
	if (!window.EventSource) return startPolling('this browser has no EventSource');
	const es = new EventSource('/api/v1/events' + (state.jobId ? `?job=${state.jobId}` : ''));
	let opened = false;
	es.addEventListener('open', () => { opened = true; });
	es.addEventListener('snapshot', (e) => { setMode('sse', 'server-sent events'); onSnapshot(JSON.parse(e.data)); });
	es.addEventListener('agent', (e) => {
		const a = JSON.parse(e.data);
		state.agents.set(a.name, a);
		if (!state.jobId) renderAgents();
	});
	es.addEventListener('job', (e) => {
		const j = JSON.parse(e.data);
		state.jobs.set(j.id, j);
		if (!state.jobId) renderJobs();
	});
	es.addEventListener('detail', (e) => {
		state.job = JSON.parse(e.data);
		renderJob();
	});
	es.addEventListener('error', () => {
		// EventSource retries by itself after a drop; a refusal (503: too many streams) closes it.
		if (es.readyState === EventSource.CLOSED) {
			es.close();
			startPolling(opened ? 'the event stream closed' : 'the event stream was refused');
		} else setMode('off', 'reconnecting');
	});
}

let pollTimer = null;

function startPolling(why) {
	setMode('poll', why);
	if (pollTimer) return;
	const tick = async () => {
		try {
			if (state.jobId) await refreshJob();
			else {
				const [a, j] = await Promise.all([api('GET', '/api/v1/agents'), api('GET', '/api/v1/jobs')]);
				if (a.status === 200) state.agents = new Map(a.body.agents.map((x) => [x.name, x]));
				if (j.status === 200) state.jobs = new Map(j.body.jobs.map((x) => [x.id, x]));
				render();
			}
		} catch (e) { /* bisectd restarting: the next tick tries again */ }
	};
	tick();
	pollTimer = setInterval(tick, POLL_MS);
}

/* Times that move by themselves: last heartbeats and elapsed times. */
function tickClocks() {
	document.querySelectorAll('td.seen').forEach((td) => { td.textContent = ago(Number(td.dataset.t)); });
	document.querySelectorAll('.elapsed').forEach((el) => {
		const j = state.jobId ? state.job : state.jobs.get(Number(el.dataset.job));
		if (j) el.textContent = duration(elapsed(j));
	});
}

function main() {
	const m = location.pathname.match(/^\/jobs\/(\d+)$/);
	state.jobId = m ? Number(m[1]) : null;
	$(state.jobId ? '#jobpage' : '#home').hidden = false;
	$('#submit-form').addEventListener('submit', submit);
	$('#token-ask').addEventListener('click', () => askToken());
	$('#token-ask2').addEventListener('click', (ev) => { ev.preventDefault(); askToken(); });
	$('#token-cancel').addEventListener('click', () => { $('#token-form').hidden = true; });
	$('#token-forget').addEventListener('click', forgetToken);
	$('#token-form').addEventListener('submit', (ev) => {
		ev.preventDefault();
		const tok = $('#token-input').value.trim();
		if (tok) useToken(tok, $('#token-remember').checked);
	});
	renderAuth();
	const kept = sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(TOKEN_KEY);
	if (kept) useToken(kept, false).then((ok) => { if (!ok) forgetToken(); });
	else {
		// Without a token whoami answers 401, unless bisectd checks none (auth: none): then the page may write.
		api('GET', '/api/v1/whoami').then((a) => {
			if (a.status === 200 && a.body && !a.body.role) {
				state.open = true;
				renderAuth();
				render();
			}
		}).catch(() => {});
	}
	document.addEventListener('click', (ev) => {
		const where = state.jobId ? $('#job-error') : $('#submit-error');
		const b = ev.target.closest('button[data-cancel]');
		if (b) jobAction(b.dataset.cancel, 'cancel', `Cancel job ${b.dataset.cancel}? Its tasks stop, running ones too; its runs are kept.`,
			undefined, where);
		const r = ev.target.closest('button[data-resume]');
		if (r) jobAction(r.dataset.resume, 'resume', r.dataset.cancelled ?
			`Resume job ${r.dataset.resume}? It runs on from the runs it has, its budgets as they were.` :
			`Give job ${r.dataset.resume} more runs? It runs on from the runs it has, twice what its report ` +
			'said would decide it.', {}, where);
		const g = ev.target.closest('button[data-again]');
		if (g) again(Number(g.dataset.again), where);
	});
	if (new URLSearchParams(location.search).has('poll')) startPolling('asked for with ?poll');
	else startEvents();
	setInterval(tickClocks, 1000);
}

main();
