// Piscina entry for builds: a thread processes sources of one registry, loading it once.
import { loadInputs, processSource, type BuildInputs, type SourceOutcome, type SourceTask } from './source.ts';

const inputs = new Map<string, Promise<BuildInputs>>();

export default function run(task: SourceTask): Promise<SourceOutcome> {
  let loaded = inputs.get(task.registryFile);
  if (!loaded) {
    loaded = loadInputs(task.registryFile);
    inputs.set(task.registryFile, loaded);
  }
  return loaded.then((i) => processSource(task, i));
}
