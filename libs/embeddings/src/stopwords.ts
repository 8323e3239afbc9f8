/**
 * English function words dropped by the GloVe-SIF embedder: they carry little topic and,
 * in a 50-d table, pull every sentence toward the same "generic English" direction.
 * Includes the fragments our tokenizer leaves from contractions ("don't" → "don", "t").
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also am an and any are aren as at
   be because been before being below between both but by
   can cannot could couldn d did didn do does doesn doing don down during
   each either else ever every few for from further
   had hadn has hasn have haven having he her here hers herself him himself his how however
   i if in into is isn it its itself just ll m ma me might mine more most must mustn my myself
   neither no nor not now o of off on once only or other others our ours ourselves out over own
   re s same shall shan she should shouldn so some such t than that the their theirs them
   themselves then there these they this those though through thus to too
   under until up upon us ve very was wasn we were weren what when where whether which while
   who whom whose why will with won would wouldn y yet you your yours yourself yourselves`
    .split(/\s+/)
    .filter(Boolean),
);
