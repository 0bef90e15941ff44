// Validates glTF/GLB files with the Khronos glTF-Validator and prints its report.
// Usage: npm install --prefix /tmp/gv gltf-validator
//        NODE_PATH=/tmp/gv/node_modules node .ci/validate-gltf.mjs rigs/ninja.glb [more files]
// Exits non-zero when any file has errors (or warnings, with --strict).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
let validator;
for (const base of [process.env.NODE_PATH, "/tmp/gv/node_modules", path.resolve("node_modules")]) {
  if (!base) continue;
  try {
    validator = require(path.join(base, "gltf-validator"));
    break;
  } catch {}
}
if (!validator) validator = require("gltf-validator");

const args = process.argv.slice(2);
const strict = args.includes("--strict");
const files = args.filter((a) => !a.startsWith("--"));
if (files.length === 0) {
  console.error("usage: node .ci/validate-gltf.mjs [--strict] FILE.glb...");
  process.exit(2);
}
let failed = false;
for (const file of files) {
  const data = new Uint8Array(await readFile(file));
  const report = await validator.validateBytes(data, {
    uri: path.basename(file),
    maxIssues: 200,
    externalResourceFunction: (uri) => readFile(path.resolve(path.dirname(file), decodeURIComponent(uri))),
  });
  const { numErrors, numWarnings, numInfos, numHints, messages } = report.issues;
  console.log(`${file}: ${numErrors} errors, ${numWarnings} warnings, ${numInfos} infos, ${numHints} hints`);
  for (const m of messages) {
    const sev = ["error", "warning", "info", "hint"][m.severity];
    console.log(`  ${sev} ${m.code} ${m.pointer ?? ""}: ${m.message}`);
  }
  const info = report.info ?? {};
  console.log(
    `  ${info.animationCount ?? 0} animations, ${info.totalVertexCount ?? "?"} vertices, ${info.jointsCount ?? info.maxInfluences ?? ""}`
  );
  if (numErrors > 0 || (strict && numWarnings > 0)) failed = true;
}
process.exit(failed ? 1 : 0);
