// Package dag parses, normalises, validates and compiles Braid workflow definitions.
//
// A definition is JSON (SPEC §3): a name, optional inputs, and nodes that each name a handler,
// a config (any JSON, which may hold << ... >> templates), and the nodes they depend on.
//
// Parse is the entry point for untrusted bytes: it enforces MaxDefinitionBytes, decodes with
// a JSON path on every problem, rewrites the seed formats into the native one (see below),
// rejects unknown fields, and validates. Validate checks a Definition built in code the same way.
// Both return a *ValidationError that lists every problem at once, each with a JSON path such as
// "$.nodes[3].depends_on[0]".
//
// Compile turns a valid Definition into a Graph: parent and child adjacency by position, a
// topological order, the template roots each node references and the compiled `when`
// conditions. A Graph is immutable and safe for concurrent use. Every algorithm here is
// iterative and linear in nodes plus edges (template ancestry uses bitsets over the referenced
// nodes only), so a 10,000-node chain or fan-out compiles in milliseconds.
//
// # Seed compatibility
//
// Parse accepts the JSON of the seed documents as-is and normalises it before validation:
//   - top-level "id" becomes "name"; an id that is not a valid name is lower-cased, characters
//     outside [a-z0-9_.-] become '-', leading '-', '_' and '.' are dropped and it is cut to 64;
//   - "tasks" or "steps" becomes "nodes"; node "node_id" becomes "id" and "dependencies"
//     becomes "depends_on";
//   - a node with "command" and no handler becomes handler "shell" with config.command set;
//   - a node with "type": "task" and no handler (seed 002) becomes handler "simulate"; its
//     config "duration_seconds" n becomes "duration": "<n>s" and config "max_retries" is removed;
//     other config keys (such as "action") are kept;
//   - node-level "retries" or "max_retries" (seed 000), or seed 002's config "max_retries", of N
//     become retry.max_attempts N+1 unless the node already has a "retry";
//   - seed 004 handlers: "external_service" becomes "http" with config.mock = true,
//     "llm_service" becomes "llm", "data_processor" becomes "transform". In those nodes' config
//     strings, seed templates "{{ a.b }}" (also "{{ a }}" and "{{ a.b[0].c }}") become
//     "<< a.b >>"; "<<" text already there is left as it is (a native template).
//
// An alias is renamed only when its target is absent: a document with both "tasks" and "nodes"
// (or "id" and "name", "node_id" and "id", ...) keeps the alias, which is then reported as an
// unknown field.
package dag
