/**
 * `fleet-upgrade history ROLLOUT [--json]`: the rollout's audit trail, oldest first. A rollout that
 * has not started yet (a ring's build waiting: `ring.waiting`) shows the events told about it so far.
 */
import { Command } from 'commander';
import { ControlError, type RecordedEvent } from '../../rollout/index.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { callServer, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions, withControl } from '../boot/with-control.js';
import { formatHistory } from '../render/format-history.js';
import { clockNote } from '../render/format-status.js';

export function historyCommand(): Command {
  const command = new Command('history')
    .description(
      'Show the audit trail of a rollout: when, who (operator, gate, scheduler, policy), what, oldest first.',
    )
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--json', 'print JSON instead of lines', false)
    .option('--wide', 'one line per event (wider than 80 columns)', false)
    .option('--limit <n>', 'only the newest N events', (v) => Number(v));
  return addServerOption(addStateOptions(command)).action(
    async (
      id: string,
      flags: { config?: string; server?: string; json: boolean; wide: boolean; limit?: number },
    ) => {
      const limit = flags.limit && Number.isInteger(flags.limit) && flags.limit > 0 ? flags.limit : undefined;
      const server = serverOf(flags, process.env);
      const read = server
        ? async () => {
            const path = `/rollouts/${encodeURIComponent(id)}/history${limit ? `?limit=${limit}` : ''}`;
            const answer = (await callServer(server, 'GET', path)) as { events: RecordedEvent[] };
            return { events: answer.events, note: undefined };
          }
        : undefined;
      const { events, note } = read
        ? await read()
        : await withControl(flags, async (deps) => {
            const events = await deps.events.history(id, limit);
            // Not started (yet): its events, when a ring's wait told some.
            if (!(await deps.rollouts.get(id)) && events.length === 0)
              throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
            // A rehearsal's events are on its simulated clock: said first, as status says it.
            const scale = (deps.clock as { scale?: unknown }).scale;
            const note = typeof scale === 'number' ? clockNote(scale, deps.clock.now()) : undefined;
            return { events, note };
          });
      const text = flags.json
        ? JSON.stringify({ rollout: id, events }, null, 2)
        : [...(note ? [note] : []), formatHistory(events, { wide: flags.wide })].join('\n');
      process.stdout.write(`${text}\n`);
    },
  );
}
