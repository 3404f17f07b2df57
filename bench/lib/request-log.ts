/**
 * The requests each organization's service answered, from the simulator's log (GET /_sim/requests,
 * the latest 20,000 per organization, each with the simulated ms of its answer, its endpoint and
 * status), and what they say about the request rate: per organization the busiest one-second
 * window (the service's limit is 4 in any sliding second) and when its 429s came; across the
 * organizations the requests per simulated minute, their peak, and their mean while every
 * organization was still creating tasks (from the last organization's first create to the first
 * organization's last create: the stretch where every budget could be in use).
 */
export interface LoggedRequest {
  at: number;
  endpoint: string;
  status: number;
  subject?: string;
}

/** Every logged request of `org` (none: the simulator's only one), oldest first (paged 10,000 at a time). */
export async function readRequestLog(
  simUrl: string,
  org?: string,
): Promise<{ requests: LoggedRequest[]; dropped: number }> {
  const all: LoggedRequest[] = [];
  let since = 0;
  let dropped = 0;
  for (;;) {
    const res = await fetch(`${simUrl}/_sim/requests?${org ? `org=${org}&` : ''}since=${since}&limit=10000`, {
      signal: AbortSignal.timeout(60_000),
    });
    const page = (await res.json()) as { requests: LoggedRequest[]; dropped: number };
    dropped = page.dropped;
    // A page starts at `since` inclusive: skip those of that instant already taken.
    let skip = all.filter((r) => r.at === since).length;
    const fresh = page.requests.filter((r) => !(r.at === since && skip-- > 0));
    all.push(...fresh);
    if (page.requests.length < 10_000 || fresh.length === 0) break;
    since = (all[all.length - 1] as LoggedRequest).at;
  }
  return { requests: all, dropped };
}

/** The most entries of sorted `times` within any window of `windowMs` (a sliding window). */
export function busiestWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** Entries of `times` per minute after `from` (index 0: the first minute). */
export function perMinute(times: readonly number[], from: number): number[] {
  const out: number[] = [];
  for (const t of times) {
    const m = Math.floor((t - from) / 60_000);
    while (out.length <= m) out.push(0);
    out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

const round = (n: number, d = 2) => (Number.isFinite(n) ? Number(n.toFixed(d)) : null);

export function requestFigures(
  logs: readonly {
    org: string;
    requests: LoggedRequest[];
    dropped: number;
    creates: { first: number; last: number };
  }[],
  o: { from: number; until: number },
) {
  const inRun = (r: LoggedRequest) => r.at >= o.from && r.at <= o.until;
  const byOrg = logs.map((l) => {
    const rs = l.requests.filter(inRun);
    const answered = rs.filter((r) => r.status !== 429).map((r) => r.at);
    const limited = rs.filter((r) => r.status === 429);
    const byEndpoint: Record<string, number> = {};
    for (const r of limited) byEndpoint[r.endpoint] = (byEndpoint[r.endpoint] ?? 0) + 1;
    return {
      org: l.org,
      /** Listing pages answered per simulated minute (the passes that notice tasks' ends). */
      listsPerMinute: perMinute(
        rs.filter((r) => r.endpoint === 'list').map((r) => r.at),
        o.from,
      ),
      logged: rs.length,
      dropped: l.dropped,
      /** Most requests answered (not 429) in any simulated second; the service allows 4. */
      busiestSecond: busiestWindow(answered, 1000),
      rateLimited: {
        count: limited.length,
        byEndpoint,
        /** Simulated minutes after the first create of any organization. */
        atMin: limited.map((r) => round((r.at - o.from) / 60_000, 1)),
      },
    };
  });
  const all = logs.flatMap((l) => l.requests.filter(inRun).map((r) => r.at));
  const everyMinute = perMinute(all, o.from);
  const allCreating = {
    from: Math.max(...logs.map((l) => l.creates.first)),
    until: Math.min(...logs.map((l) => l.creates.last)),
  };
  const inAll = all.filter((at) => at >= allCreating.from && at <= allCreating.until).length;
  const span = allCreating.until - allCreating.from;
  return {
    byOrg,
    perMinute: everyMinute,
    /** Requests per simulated second in the busiest simulated minute, all organizations. */
    peakMinuteRate: round(Math.max(...everyMinute) / 60),
    whileAllCreating: {
      minutes: round(span / 60_000, 1),
      rate: span > 0 ? round(inAll / (span / 1000)) : null,
    },
  };
}
