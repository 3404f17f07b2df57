/**
 * `fleet-upgrade notify --print | --test NAME [--type EVENT]`: the default message templates, or
 * one sample message sent to a receiver (or webhook) of the settings, with the answer printed.
 * Exit 0 when it answered 2xx, 1 otherwise; 64 for an unknown NAME or type; 78 for bad settings.
 */
import { Command } from 'commander';
import { FleetError } from '../../lib/errors.js';
import { defaultSampleType, printTemplates, sendSample } from '../../notify/send-sample.js';
import { webhookOrigin } from '../../notify/webhook-origin.js';
import { ROLLOUT_EVENT_TYPES, type RolloutEventType } from '../../rollout/index.js';
import { loadDaemonConfig } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { addStateOptions } from '../boot/with-control.js';

export function notifyCommand(): Command {
  const command = new Command('notify')
    .description(
      'Show the default message templates (--print), or send one sample message to a receiver or webhook of the settings and print its answer (--test NAME).',
    )
    .option(
      '--print',
      'print the default template of each event type and the fields a template may use',
      false,
    )
    .option('--test <name>', 'send one sample message to the receiver (notify:) or webhook (webhooks:) NAME')
    .option(
      '--type <event>',
      'the sample event type (default: rollout.halted, or the first the receiver wants)',
    );
  return addStateOptions(command).action(
    async (flags: { config?: string; print: boolean; test?: string; type?: string }) => {
      if (flags.print) {
        process.stdout.write(`${printTemplates()}\n`);
        return;
      }
      if (!flags.test) throw new FleetError('FLEET_ERR_USAGE', 'give --print or --test NAME (see --help)');
      const config = loadDaemonConfig({
        env: process.env,
        flags: flags.config ? { config: flags.config } : {},
        needApi: false,
      });
      const webhook = config.webhooks.find((w) => w.name === flags.test);
      if (!webhook) {
        const names = config.webhooks.map((w) => w.name);
        throw new FleetError(
          'FLEET_ERR_USAGE',
          `no receiver or webhook named '${flags.test}' in the settings${names.length ? ` (there are: ${names.join(', ')})` : ''}`,
        );
      }
      if (flags.type !== undefined && !(ROLLOUT_EVENT_TYPES as readonly string[]).includes(flags.type))
        throw new FleetError(
          'FLEET_ERR_USAGE',
          `--type: expected an event type (${ROLLOUT_EVENT_TYPES.join(', ')})`,
        );
      const type = (flags.type as RolloutEventType | undefined) ?? defaultSampleType(webhook);
      const kind = webhook.receiver?.kind ?? `webhook (${webhook.format})`;
      const { result } = await sendSample(webhook, type).catch((err: Error) => {
        throw new FleetError('FLEET_ERR_USAGE', err.message);
      });
      const to = `${webhook.name}: ${kind} at ${webhookOrigin(webhook.url)}`;
      if (result.outcome === 'delivered') {
        process.stdout.write(
          `sent a sample ${type} message to ${to}\nanswered ${result.status}: delivered\n`,
        );
        return;
      }
      process.stdout.write(`sent a sample ${type} message to ${to}\n${result.reason}: ${result.outcome}\n`);
      process.exitCode = EXIT.failure;
    },
  );
}
