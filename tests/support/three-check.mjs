// Loads a glb with three.js's GLTFLoader (no browser: GLTFLoader.parse on the file's bytes), plays
// its first animation with an AnimationMixer to the given times, and prints every mesh's world
// vertex positions there as JSON, computed on the CPU the way three.js's shaders do: morph targets
// (Mesh.getVertexPosition), then skinning (SkinnedMesh.applyBoneTransform, which
// getVertexPosition calls for a SkinnedMesh), then the object's world matrix.
//
// Usage: DRAPE_THREE_DIR=/tmp/drape-ci-tools/node_modules \
//        node tests/support/three-check.mjs FILE.glb T1,T2,...
// Output: {"revision", "animations": [{name, duration, tracks}], "meshes": [{name, mesh,
//          primitive, skinned, vertices, morphTargets, positions: [[x,y,z,…] per time],
//          normals: [[x,y,z,…] per time] or null}]}
// Normals are given for meshes that are not skinned and have a NORMAL attribute: the base
// normal plus each morph target's normal times its influence (glTF targets are relative),
// normalised, then turned by the object's normal matrix — what three.js's morphnormal_vertex
// and defaultnormal_vertex shader chunks do.
// Exits non-zero (message on stderr) when three.js cannot load the file.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.env.DRAPE_THREE_DIR;
if (!dir) {
  console.error("DRAPE_THREE_DIR (a node_modules folder holding three) is not set");
  process.exit(2);
}
const [file, timesArg] = process.argv.slice(2);
if (!file || timesArg === undefined) {
  console.error("usage: node three-check.mjs FILE.glb T1,T2,...");
  process.exit(2);
}
const times = timesArg === "" ? [] : timesArg.split(",").map(Number);

const THREE = await import(pathToFileURL(path.join(dir, "three/build/three.module.js")).href);
const { GLTFLoader } = await import(
  pathToFileURL(path.join(dir, "three/examples/jsm/loaders/GLTFLoader.js")).href
);

const bytes = await readFile(file);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const loader = new GLTFLoader();
// Node has no image decoder (no DOM, no createImageBitmap): textures become empty placeholders.
// Geometry, skins, morph targets and animations, which this check is about, load as in a
// browser.
loader.register(() => ({
  name: "drape_node_textures",
  loadTexture: () => Promise.resolve(new THREE.Texture()),
}));
const gltf = await new Promise((resolve, reject) => loader.parse(buffer, "", resolve, reject)).catch(
  (e) => {
    console.error(`three.js could not load ${file}: ${e?.stack ?? e}`);
    process.exit(1);
  }
);

const root = gltf.scene;
const mixer = new THREE.AnimationMixer(root);
const clip = gltf.animations[0];
if (clip) mixer.clipAction(clip).play();

const meshes = [];
root.traverse((o) => {
  if (!o.isMesh) return;
  const assoc = gltf.parser.associations.get(o) ?? {};
  meshes.push({
    object: o,
    out: {
      name: o.name,
      mesh: assoc.meshes ?? null,
      primitive: assoc.primitives ?? null,
      skinned: !!o.isSkinnedMesh,
      vertices: o.geometry.attributes.position.count,
      morphTargets: (o.geometry.morphAttributes.position ?? []).length,
      positions: [],
      normals: !o.isSkinnedMesh && o.geometry.attributes.normal ? [] : null,
    },
  });
});

const v = new THREE.Vector3();
// Seven decimals: 0.1 µm, far below the tolerance the tests use, and a third of the JSON.
const r = (x) => Math.round(x * 1e7) / 1e7;
for (const t of times) {
  mixer.setTime(t);
  root.updateMatrixWorld(true);
  for (const { object, out } of meshes) {
    if (object.isSkinnedMesh) object.skeleton.update();
    const n = object.geometry.attributes.position.count;
    const flat = new Array(n * 3);
    for (let i = 0; i < n; i++) {
      object.getVertexPosition(i, v);
      v.applyMatrix4(object.matrixWorld);
      flat[3 * i] = r(v.x);
      flat[3 * i + 1] = r(v.y);
      flat[3 * i + 2] = r(v.z);
    }
    out.positions.push(flat);
    if (out.normals) {
      const g = object.geometry;
      const base = g.attributes.normal;
      const targets = g.morphAttributes.normal ?? [];
      const inf = object.morphTargetInfluences ?? [];
      const nm = new THREE.Matrix3().getNormalMatrix(object.matrixWorld);
      const nf = new Array(n * 3);
      for (let i = 0; i < n; i++) {
        v.fromBufferAttribute(base, i);
        for (let k = 0; k < targets.length; k++) {
          if (inf[k] !== 0) {
            v.x += inf[k] * targets[k].getX(i);
            v.y += inf[k] * targets[k].getY(i);
            v.z += inf[k] * targets[k].getZ(i);
          }
        }
        v.normalize().applyMatrix3(nm).normalize();
        nf[3 * i] = r(v.x);
        nf[3 * i + 1] = r(v.y);
        nf[3 * i + 2] = r(v.z);
      }
      out.normals.push(nf);
    }
  }
}

process.stdout.write(
  JSON.stringify({
    revision: THREE.REVISION,
    animations: gltf.animations.map((a) => ({
      name: a.name,
      duration: a.duration,
      tracks: a.tracks.length,
    })),
    meshes: meshes.map((m) => m.out),
  })
);
