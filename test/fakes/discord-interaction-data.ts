/**
 * The `data` of the interactions people make in the fake Discord: a slash command with its option
 * values (users and attachments resolved), and a submitted modal with its inputs' values.
 */
import type { JsonObject } from './discord-wire.ts';

/**
 * A slash command's data: `options` in the order given, typed as `registered` declares them
 * (string when unknown); `attachments` are the file option's values, resolved by id.
 */
export function slashCommandData(
  registered: JsonObject | undefined,
  name: string,
  options: [string, string][],
  attachments: (JsonObject & { id: string })[],
): JsonObject {
  const specs = (registered?.options ?? []) as JsonObject[];
  const typeOf = (n: string) => Number(specs.find((o) => o.name === n)?.type ?? 3);
  const users = options
    .filter(([n]) => typeOf(n) === 6)
    .map(([, v]) => [
      v,
      { id: v, username: `user${v}`, discriminator: '0', global_name: null, avatar: null },
    ]);
  const data: JsonObject = {
    id: String(registered?.id ?? '1'),
    name,
    type: 1,
    options: [
      ...options.map(([n, value]) => ({ name: n, type: typeOf(n), value })),
      ...attachments.map((a) => ({ name: 'file', type: 11, value: a.id })),
    ],
    ...((users.length > 0 || attachments.length > 0) && {
      resolved: {
        ...(users.length > 0 && { users: Object.fromEntries(users) }),
        ...(attachments.length > 0 && {
          attachments: Object.fromEntries(attachments.map((a) => [a.id, a])),
        }),
      },
    }),
  };
  return data;
}

/** A modal's submission: each input of `modal` with its value in `values` (by custom_id). */
export function modalSubmitData(modal: JsonObject, values: Record<string, string>): JsonObject {
  let n = 0;
  const input = (c: JsonObject) => {
    const value = values[c.custom_id as string] ?? '';
    // Discord's client will not submit a required input (the default) left empty.
    if (value === '' && c.required !== false) {
      throw new Error(`fake discord: input ${String(c.custom_id)} is required`);
    }
    return { type: 4, id: ++n, custom_id: c.custom_id as string, value };
  };
  const components = (modal.components as JsonObject[]).map((c) => {
    if (c.type === 18) return { type: 18, id: ++n, component: input(c.component as JsonObject) };
    if (c.type === 1)
      return { type: 1, id: ++n, components: (c.components as JsonObject[]).map(input) };
    return { type: c.type as number, id: ++n };
  });
  return { custom_id: modal.custom_id as string, components } as unknown as JsonObject;
}
