import type { ColumnType, Generated } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { TriggerAction, TriggerFilter, TriggerOn } from '@memex/contracts';

/** The head service's read model (schema `head`). */
export interface HeadDatabase {
  triggers: {
    id: string;
    name: string;
    on: Static<typeof TriggerOn>;
    filter: ColumnType<Static<typeof TriggerFilter>, string, string>;
    action: ColumnType<Static<typeof TriggerAction>, string, string>;
    /** null: registered by the owner. */
    scope_labels: string[] | null;
    from_seq: ColumnType<string, number, number>;
    /** When it was registered (null for triggers from before this column: they are taken as registered at the epoch). */
    registered_at: ColumnType<Date | null, Date, Date>;
    removed: Generated<boolean>;
  };
  /** What each trigger fired for: the dedupe record that survives restarts. */
  trigger_fires: {
    trigger_id: string;
    event_id: string;
    event_seq: ColumnType<string, number, number>;
    fired_at: ColumnType<Date, Date, Date>;
  };
  trigger_cursor: {
    id: number;
    seq: ColumnType<string, number, number>;
  };
}
