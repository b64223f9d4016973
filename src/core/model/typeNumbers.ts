/**
 * The model's type numbers against the topology's (`idLayout.types`, repeated in the published
 * document so every gateway and worker decodes IDs alike). A number is in every ID made with it, so
 * it never changes and is never given to another type, even once its type is gone from the model:
 *
 *   model { pin: 1, board: 2 }, topology { pin: 1, board: 2 }           → no problem
 *   model { pin: 1, board: 5 }, topology { pin: 1, board: 2 }           → disagree: board is 2, the model says 5
 *   model { pin: 1, board: 2, idea: 6 }, topology { pin: 1, board: 2 }  → disagree: the topology has no idea
 *   model { pin: 1 },           topology { pin: 1, board: 2 }           → undeclared: board (2) is reserved
 */

/** A type as the model declares it (ObjectDef's part that matters here). */
export interface DeclaredType {
  readonly key: string;
  readonly typeNumber: number;
  /** `schema/schema.graphql:217`. */
  readonly declaredAt: string;
}

export interface TypeNumberProblems {
  /**
   * The model's types the topology numbers otherwise or not at all: a gateway would decode IDs
   * unlike the others. Refused in every version of the document.
   */
  readonly disagree: readonly string[];
  /**
   * The topology's types the model does not declare: their numbers stay reserved (IDs carrying them
   * may remain), so a gateway or worker whose model lost one is refused at start.
   */
  readonly undeclared: readonly string[];
}

export function compareTypeNumbers(model: readonly DeclaredType[], published: Readonly<Record<string, number>>): TypeNumberProblems {
  const publishedName = new Map(Object.entries(published).map(([name, n]) => [n, name]));
  const declared = new Set(model.map((t) => t.key));
  const disagree: string[] = [];
  for (const t of model) {
    const n = published[t.key];
    const holder = publishedName.get(t.typeNumber);
    if (n === t.typeNumber) continue;
    if (n !== undefined) {
      disagree.push(`idLayout.types.${t.key} is ${n}, the model declares ${t.key} as ${t.typeNumber} (${t.declaredAt}), expected the same number: a type number never changes`);
    } else if (holder !== undefined) {
      disagree.push(`idLayout.types gives ${t.typeNumber} to ${holder}, the model gives it to ${t.key} (${t.declaredAt}), expected a number the topology has not given: a type number is never reused`);
    } else {
      disagree.push(`idLayout.types has no ${t.key}, the model declares ${t.key} as ${t.typeNumber} (${t.declaredAt}), expected the topology to list it: publish one with this model's types (shardql topology publish)`);
    }
  }
  const undeclared = Object.entries(published)
    .filter(([name]) => !declared.has(name))
    .map(([name, n]) => `idLayout.types.${name} is ${n}, the model declares no ${name}, expected it declared with number ${n}: a removed type's number stays reserved`);
  return { disagree, undeclared };
}
