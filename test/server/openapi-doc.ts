// The served OpenAPI document's shape, as far as the tests read it (openapi.test.ts checks the
// document, contract.test.ts generates requests from it).

export interface Schema {
  readonly type?: 'string' | 'number' | 'integer' | 'array';
  readonly description?: string;
  readonly enum?: readonly string[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly items?: Schema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly 'x-values-from'?: string;
}

export interface Parameter {
  readonly name: string;
  readonly in: 'query' | 'header' | 'path';
  readonly description?: string;
  readonly style?: string;
  readonly explode?: boolean;
  readonly schema: Schema;
}

export interface Response {
  readonly description?: string;
  readonly headers?: Record<string, { readonly required?: boolean; readonly schema?: { readonly type?: string } }>;
  readonly content?: Record<string, { readonly schema?: { readonly $ref?: string } }>;
  readonly links?: Record<string, { readonly operationId?: string; readonly parameters?: Record<string, string> }>;
}

export interface Operation {
  readonly operationId: string;
  readonly parameters?: readonly Parameter[];
  readonly responses: Record<string, Response>;
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly 'x-dependencies'?: readonly string[];
}

export interface Doc {
  readonly openapi: string;
  readonly info: { readonly description?: string; readonly license?: { readonly name?: string; readonly url?: string } };
  readonly servers: readonly { readonly url: string }[];
  readonly tags: readonly { readonly name: string; readonly description?: string }[];
  readonly paths: Record<string, { readonly get?: Operation; readonly head?: Operation }>;
  readonly components: {
    readonly schemas: Record<string, { readonly properties?: Record<string, unknown> }>;
    readonly securitySchemes: Record<string, { readonly type: string; readonly scheme?: string; readonly in?: string; readonly name?: string }>;
  };
}
