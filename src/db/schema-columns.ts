/** Column helpers shared by the table types of bridge.db (schema-*.ts). */
import type { ColumnType } from 'kysely';

/** A column the database fills in when an insert omits it (a DEFAULT). */
export type Defaulted<T> = ColumnType<T, T | undefined, T>;
