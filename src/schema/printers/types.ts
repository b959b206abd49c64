// The shapes of a server-side table printer. See index.ts for the public entry points.

/** One column of a meta.k8s.io Table (TableColumnDefinition). */
export interface ColumnDefinition {
  name: string;
  /** OpenAPI type: "string", "integer", "number", "boolean" or "date" */
  type: string;
  /** "name" for the column holding the object's name, otherwise "" */
  format: string;
  description: string;
  /** 0: always shown; 1: shown by kubectl only with -o wide */
  priority: number;
}

/** A TableRowCondition: a fact about a row as a whole (for pods, that they have completed). */
export interface RowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Printer {
  columns: ColumnDefinition[];
  /**
   * the cells of one row, in column order; numbers as numbers, strings as strings, as Kubernetes
   * sends them. `now` is used only through format.ts's `ago`, `since` and `age`, whose results a
   * cell holds as they are (the API server keeps rows with those times in them as marks).
   */
  cells(obj: any, now: number): unknown[];
  conditions?(obj: any): RowCondition[] | undefined;
  /** the order of a list's rows, where Kubernetes' list printer sorts them (FlowSchemas by precedence) */
  order?(objs: any[]): any[];
}

/** Column constructor: col('Ready', 'string', 'What it shows.') */
export function col(name: string, type: string, description: string, priority = 0, format = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}

/** The Name column every printer starts with (except Event's, where Name is a wide column). */
export const NAME_COLUMN: ColumnDefinition = col(
  'Name',
  'string',
  "The object's name, unique among objects of its kind in its namespace (or in the cluster, for cluster-scoped kinds).",
  0,
  'name',
);

/** The Age column: time since the object was created. */
export const AGE_COLUMN: ColumnDefinition = col(
  'Age',
  'string',
  'How long ago the object was created, from metadata.creationTimestamp.',
);

/** Shared wide columns of the workload printers. */
export const CONTAINERS_COLUMN = col('Containers', 'string', 'The names of the containers in the pod template.', 1);
export const IMAGES_COLUMN = col('Images', 'string', 'The images the pod template runs, one per container.', 1);
