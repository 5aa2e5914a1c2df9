// dashboard.mjs URL JOB OUTDIR [outcome|slow]: drives Debian's chromium through
// playwright-core over the dashboard of a running bisectd whose job JOB
// is running, for tests/t0006-dashboard.sh. Prints one line per check,
// "ok DESCRIPTION" or "not ok DESCRIPTION" (then "# " lines saying why),
// which the script turns into TAP; screenshots go to OUTDIR. With
// "outcome" or "slow" it only reads the finished job's outcome on its page.
import { chromium } from 'playwright-core';

const [url, jobArg, outdir, mode] = process.argv.slice(2);
const job = Number(jobArg);
const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
// A token of role submit or admin (the dashboard is read-only without one); none with auth: none.
const token = process.env.BISECTD_TOKEN || '';
let failed = 0;

function check(cond, what, why) {
	console.log(`${cond ? 'ok' : 'not ok'} ${what}`);
	if (!cond) {
		failed++;
		if (why) for (const l of String(why).split('\n')) console.log(`# ${l}`);
	}
	return cond;
}

async function api(method, path, body) {
	const headers = body ? { 'Content-Type': 'application/json' } : {};
	if (token) headers.Authorization = `Bearer ${token}`;
	const r = await fetch(url + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
	const text = await r.text();
	let data = text;
	try { data = JSON.parse(text); } catch (e) { /* not JSON */ }
	return { status: r.status, body: data, type: r.headers.get('content-type') || '' };
}

// Waits until fn() (in the page) is truthy; false after ms.
async function until(page, fn, arg, ms) {
	try {
		await page.waitForFunction(fn, arg, { timeout: ms, polling: 200 });
		return true;
	} catch (e) {
		return false;
	}
}

const shot = async (page, name) => {
	const path = `${outdir}/${name}.png`;
	await page.screenshot({ path, fullPage: true });
	console.log(`# screenshot ${path}`);
};

const launch = () => chromium.launch({
	executablePath: browserPath,
	args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});

// A page of browser b on job JOB's page that may write (the token given, if any), every confirm accepted.
async function writingPage(b) {
	const page = await b.newPage({ viewport: { width: 1400, height: 900 } });

	page.on('dialog', (d) => d.accept());
	await page.goto(url + '/');
	if (token) {
		await page.click('#token-ask');
		await page.fill('#token-input', token);
		await page.click('#token-form button[type=submit]');
		await until(page, () => !document.querySelector('#submit-form').hidden, null, 5000);
	}
	await page.goto(`${url}/jobs/${job}`);
	return page;
}

// The finished job's outcome on its page: a culprit whose claim the engine
// capped (the confidence and the model's posterior), or one found on the
// share of slow runs (both groups' shares), as the test stored them.
const OUTCOMES = {
	outcome: ["capped: the runs show two modes; the model's posterior 99\\.99",
		'a capped confidence is shown beside the model\'s posterior', '6-capped'],
	slow: ["the change is in the slow runs: 52% of the bad group's runs,\\s+1% of the good group's",
		'a change in the slow runs is shown with both groups\' shares', '7-slow-runs'],
	agents: ["1\\.25 \u2192 0\\.960 ops/s[\\s\\S]*hmeans at lab1's level: lab2 reads -15\\.00% against it",
		'with two agents the hmeans are at the reference\'s level, and the other agent\'s level is shown', '8-agents'],
};
// An undecided job (as the test stored it): its page has a "more runs"
// button; clicked and confirmed, the job runs on (resumed), as the API says.
// A cancelled one (resume-cancelled) has a "resume" button that does the same.
if (mode === 'resume' || mode === 'resume-cancelled') {
	const cancelled = mode === 'resume-cancelled';
	const label = cancelled ? 'resume' : 'more runs';
	const b = await launch();
	try {
		const page = await writingPage(b);

		check(await until(page, (l) => document.querySelector('#job-head button.resume')?.textContent === l, label, 10000),
			`${cancelled ? 'a cancelled' : 'an undecided'} job has a "${label}" button`);
		await shot(page, cancelled ? '10-cancelled' : '9-undecided');
		await page.click('#job-head button.resume');
		check(await until(page, () => /running|queued/.test(document.querySelector('#job-head h2').textContent) &&
			!document.querySelector('#job-head button.resume'), null, 15000),
			`"${label}" from the page: the job runs on`, await page.textContent('#job-head h2'));
		const after = await api('GET', `/api/v1/jobs/${job}`);
		check(['running', 'queued'].includes(after.body.state) &&
			(after.body.events || []).some((e) => e.kind === 'resumed'),
			'... and the API says it was resumed', JSON.stringify([after.body.state, (after.body.events || []).slice(-3)]));
	} finally {
		await b.close();
	}
	process.exit(failed ? 1 : 0);
}
// An ended job (as the test left it): its page has an "again" button;
// clicked and confirmed, a new job of its range and settings is made and
// the page goes to it.
if (mode === 'again') {
	const b = await launch();
	try {
		const page = await writingPage(b);

		check(await until(page, () => document.querySelector('#job-head button.again')?.textContent === 'again', null, 10000),
			'an ended job has an "again" button');
		await shot(page, '11-again');
		await page.click('#job-head button.again');
		const moved = await until(page, (id) => new RegExp(`^/jobs/(?!${id}$)[0-9]+$`).test(location.pathname), job, 15000);
		check(moved, '"again" from the page: the page goes to a new job', page.url());
		const id = Number(new URL(page.url()).pathname.split('/').pop());
		const [old, made] = [await api('GET', `/api/v1/jobs/${job}`), await api('GET', `/api/v1/jobs/${id}`)];
		const keys = ['repo', 'good', 'bad', 'workload', 'pool', 'runs', 'policy', 'confidence', 'alpha', 'min_effect',
			'direction', 'append', 'config', 'budget_runs', 'budget_builds', 'budget_seconds', 'end_runs'];
		const differ = keys.filter((k) => JSON.stringify(old.body[k]) !== JSON.stringify(made.body[k]));
		check(moved && made.status === 200 && differ.length === 0,
			`... of job ${job}'s range and settings (${keys.length} of them)`,
			JSON.stringify(differ.map((k) => [k, old.body[k], made.body[k]])));
		console.log(`# again: job ${id}`);
	} finally {
		await b.close();
	}
	process.exit(failed ? 1 : 0);
}
if (OUTCOMES[mode]) {
	const [pattern, what, name] = OUTCOMES[mode];
	const b = await launch();
	try {
		const page = await b.newPage({ viewport: { width: 1400, height: 900 } });

		await page.goto(`${url}/jobs/${job}`);
		const seen = await until(page, (re) => new RegExp(re).test(document.querySelector('#job-outcome').textContent),
			pattern, 10000);
		check(seen, what, await page.textContent('#job-outcome'));
		if (mode === 'agents') {
			// The measured commits at the reference's level too: the line, and each row's hmean the job's hmean_ref.
			const levels = await until(page, () => /hmeans and runs at lab1's level: lab2 reads -15\.00% against it/
				.test(document.querySelector('#job-commits-levels').textContent), null, 10000);
			check(levels, 'the measured commits say they are at lab1\'s level', await page.textContent('#job-commits-levels'));
			const j = await (await fetch(`${url}/api/v1/jobs/${job}`)).json();
			const rows = await page.evaluate(() => [...document.querySelectorAll('#job-commits tbody tr')]
				.map((tr) => [Number(tr.dataset.idx), tr.children[5].textContent.trim()]));
			const want = new Map((j.commits || []).filter((c) => c.hmean_ref != null).map((c) => [c.idx, c.hmean_ref]));
			// num() prints 5 significant digits and a prefix from 1e5 up ("172.48M"), none after the point from 100 up.
			const value = (text) => parseFloat(text) * (10 ** (3 * Math.max(0, ' KMGT'.indexOf(text.match(/^[-\d.]+([KMGT])?/)?.[1] || ' '))));
			const off = rows.filter(([idx, text]) => want.has(idx) &&
				Math.abs(value(text) - want.get(idx)) > Math.max(0.0051 * Math.abs(want.get(idx)), 0.51));
			const moved = (j.commits || []).filter((c) => c.hmean_ref != null && Math.abs(c.hmean_ref / c.hmean - 1) > 0.01);
			check(want.size > 0 && off.length === 0 && moved.length > 0,
				`... each of the ${want.size} measured rows at its hmean_ref (${moved.length} of them off the pooled hmean)`,
				JSON.stringify(off));
			// A commit of one run has no spread: "(-)" in place of a CV of 0; the others their CV.
			const cells = await page.evaluate(() => [...document.querySelectorAll('#job-commits tbody tr')]
				.map((tr) => [parseInt(tr.children[4].textContent, 10), tr.children[5].textContent.trim()])
				.filter(([, text]) => text !== ''));
			const wrong = cells.filter(([n, text]) => !(n === 1 ? /\(-\)$/ : /\(\d+\.\d{4}\)$/).test(text));
			check(cells.length > 0 && wrong.length === 0,
				`... each row's CV, "(-)" at the ${cells.filter(([n]) => n === 1).length} of one run`,
				JSON.stringify(wrong));
		}
		await shot(page, name);
	} finally {
		await b.close();
	}
	process.exit(failed ? 1 : 0);
}

const browser = await launch();
try {
	const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
	const external = [];
	const consoleErrors = [];
	page.on('request', (r) => { if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) external.push(r.url()); });
	page.on('console', (m) => { if (m.type() === 'error' && !/404|Failed to load resource/.test(m.text())) consoleErrors.push(m.text()); });
	page.on('pageerror', (e) => consoleErrors.push(String(e)));
	page.on('dialog', (d) => d.accept());

	// 1. The dashboard while the job runs, live through server-sent events.
	await page.goto(url + '/');
	check(await until(page, () => document.body.dataset.live === 'sse', null, 10000),
		'the dashboard opens its event stream', `live: ${await page.evaluate(() => document.body.dataset.live)}`);
	check(await until(page, (j) => !!document.querySelector(`#jobs tr[data-job="${j}"]`), job, 10000),
		`job ${job} is listed`);
	const cand = await page.evaluate((j) => document.querySelector(`#jobs tr[data-job="${j}"] td.candidates`).textContent, job);
	check(/^\d+$/.test(cand.trim()), `... with its candidates left (${cand.trim()})`);

	// 0. Without a token the page is read-only and asks for one; a wrong token is refused, the right one kept.
	check(await page.evaluate(() => document.querySelector('#submit-form').hidden &&
		!document.querySelector('#submit-locked').hidden && !document.querySelector('button.cancel')),
	'without a token the dashboard is read-only (no submit form, no cancel button)');
	await page.click('#token-ask');
	check(await page.isVisible('#token-form'), '"enter a token" asks for one');
	await page.fill('#token-input', 'bd_00000000_00000000000000000000000000000000');
	await page.click('#token-form button[type=submit]');
	check(await until(page, () => !document.querySelector('#token-error').hidden &&
		/refused the token/.test(document.querySelector('#token-error').textContent), null, 5000),
	'a wrong token is refused with the API\'s message', await page.textContent('#token-error'));
	check(await page.evaluate(() => document.querySelector('#submit-form').hidden), '... and the page stays read-only');
	if (token) {
		await page.fill('#token-input', token);
		await page.click('#token-form button[type=submit]');
		check(await until(page, () => !document.querySelector('#submit-form').hidden &&
			document.querySelector('#token-form').hidden, null, 5000), 'with a good token the submit form appears');
		check(/token: (admin|submit)/.test(await page.textContent('#auth-who')), '... and the page says the token\'s role',
			await page.textContent('#auth-who'));
		check(await page.evaluate((t) => sessionStorage.getItem('bisectd.token') === t &&
			!localStorage.getItem('bisectd.token'), token), '... kept in sessionStorage only');
		check(await until(page, (j) => !!document.querySelector(`#jobs tr[data-job="${j}"] button.cancel`), job, 5000),
			'... and the running job gets its cancel button');
	}
	await shot(page, '0-token');
	await page.evaluate(() => { window.__noReload = 1; });

	const phases = () => page.evaluate(() => [...document.querySelectorAll('#agents tr[data-agent]')]
		.map((tr) => `${tr.dataset.agent}=${tr.querySelector('.phase').textContent.trim() || '-'}`).join(' '));
	const runsOf = () => page.evaluate((j) => {
		const td = document.querySelector(`#jobs tr[data-job="${j}"] td.runs`);
		return td ? parseInt(td.textContent, 10) || 0 : -1;
	}, job);
	const seenPhases = new Map();
	const firstRuns = await runsOf();
	let lastRuns = firstRuns, changedPhase = '', t0 = Date.now();
	const firstPhases = await phases();
	for (const kv of firstPhases.split(' ')) seenPhases.set(kv, 1);
	while (Date.now() - t0 < 90000 && (!changedPhase || lastRuns <= firstRuns)) {
		await page.waitForTimeout(300);
		const p = await phases();
		if (!changedPhase && p !== firstPhases && /=(fetch|build|boot|run|claimed)/.test(p)) changedPhase = p;
		for (const kv of p.split(' ')) seenPhases.set(kv, 1);
		lastRuns = await runsOf();
	}
	check(!!changedPhase, 'an agent changes phase on the page without a reload',
		`first: ${firstPhases}; seen: ${[...seenPhases.keys()].join(' ')}`);
	console.log(`# agents' phases seen: ${[...seenPhases.keys()].join(' ')}`);
	check(lastRuns > firstRuns, `job ${job}'s runs move on the page without a reload (${firstRuns} -> ${lastRuns})`);
	check(await page.evaluate(() => window.__noReload === 1), '... and the page was not reloaded');
	check(await page.evaluate(() => [...document.querySelectorAll('#agents td.seen')].every((td) => /ago$/.test(td.textContent))),
		'each agent shows its last heartbeat');
	await shot(page, '1-dashboard');

	// 2. A job with a bad ref: the API's own message on the page.
	const bad = { repo: 'demo', good: 'v1.0', bad: 'no-such-ref', workload: 'bench' };
	await page.fill('#submit-form input[name=repo]', bad.repo);
	await page.fill('#submit-form input[name=good]', bad.good);
	await page.fill('#submit-form input[name=bad]', bad.bad);
	await page.fill('#submit-form input[name=workload]', bad.workload);
	await page.click('#submit-form button[type=submit]');
	const shown = await until(page, () => !document.querySelector('#submit-error').hidden, null, 30000);
	const text = await page.textContent('#submit-error');
	const want = await api('POST', '/api/v1/jobs', bad);
	check(shown && want.status >= 400 && want.status < 500 && text.includes(want.body.error) &&
		text.startsWith(String(want.status)), 'a bad ref shows the API\'s status and message',
	`page: ${text}\napi: ${want.status} ${JSON.stringify(want.body)}`);
	await shot(page, '2-bad-ref');

	// 3. The job page, with its charts (or their <img> where this bisectd has no charts).
	await page.goto(`${url}/jobs/${job}`);
	check(await until(page, () => !!document.querySelector('#job-head h2'), null, 10000), `the page of job ${job} opens`);
	const head = await page.textContent('#job-head');
	check(/12 runs an end before not-reproduced/.test(head), 'the job page shows the end runs the job asked for',
		`head: ${head}`);
	const srcs = await page.evaluate(() => [...document.querySelectorAll('#job-charts img')].map((i) => i.dataset.src));
	check(srcs.includes(`/api/v1/jobs/${job}/charts/timeline.svg`), 'the job page embeds the timeline chart',
		`img: ${srcs.join(' ')}`);
	const chart = await api('GET', `/api/v1/jobs/${job}/charts/timeline.svg`);
	if (chart.status === 200) {
		check(await until(page, () => {
			const i = document.querySelector('#job-charts figure[data-chart=timeline] img');
			return i && i.complete && i.naturalWidth > 0;
		}, null, 30000), 'the timeline chart is drawn on the job page');
	} else {
		console.log(`# this bisectd has no charts route yet (GET timeline.svg: ${chart.status}): the page says so`);
		check(await until(page, () => {
			const f = document.querySelector('#job-charts figure[data-chart=timeline]');
			return f && f.querySelector('img').hidden && !f.querySelector('.missing').hidden;
		}, null, 10000), 'a chart that cannot be had is replaced by its reason',
		await page.textContent('#job-charts'));
	}
	check(await until(page, () => document.querySelectorAll('#job-commits svg circle').length > 0, null, 20000),
		'the job page draws measured runs as points');
	check(await until(page, () => /hmean|\(0\.\d{4}\)/.test(document.querySelector('#job-commits').textContent), null, 5000),
		'... with each commit\'s hmean (CV)');
	await shot(page, '3-job-page');

	// 4. Cancel the job from its page.
	check(await until(page, () => !!document.querySelector('#job-head button.cancel'), null, 5000), 'the running job has a cancel button');
	await page.click('#job-head button.cancel');
	check(await until(page, () => /cancelled/.test(document.querySelector('#job-head h2').textContent), null, 15000),
		'cancel from the page: the job shows cancelled');
	const after = await api('GET', `/api/v1/jobs/${job}`);
	check(after.body.state === 'cancelled', '... and the API says so too', JSON.stringify(after.body.state));
	await shot(page, '4-cancelled');

	// 5. Where a stream cannot be had, the page polls.
	await page.goto(url + '/?poll');
	check(await until(page, () => document.body.dataset.live === 'poll' &&
		document.querySelectorAll('#agents tr[data-agent]').length > 0, null, 10000), 'with ?poll the page polls and still shows the agents');

	check(external.length === 0, 'the page asks for nothing outside bisectd', external.join('\n'));
	check(consoleErrors.length === 0, 'no script errors', consoleErrors.join('\n'));
} finally {
	await browser.close();
}
process.exit(failed ? 1 : 0);
