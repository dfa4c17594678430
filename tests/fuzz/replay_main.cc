// Runs a libFuzzer target without libFuzzer, so that `make test` (GCC, and
// the ASan/UBSan build) exercises every fuzz target: first on each seed of
// its corpus, then on a fixed number of mutations of them (byte flips,
// insertions, deletions, splices) from a fixed seed — deterministic, and
// bounded in time. Real coverage-guided fuzzing is `make fuzz` (clang).
//
//   fuzz_replay_behaviour_set --mutations=3000
//   tests/fuzz/corpus/behaviour_set_fuzzer
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

namespace {

std::vector<std::string> ReadInputs(int argc, char** argv, long* mutations) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) {
      *mutations = std::strtol(arg.c_str() + 12, nullptr, 10);
      continue;
    }
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(arg);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      inputs.emplace_back(std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>());
    }
  }
  return inputs;
}

// SplitMix64: the same mutations on every machine.
uint64_t Next(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string Mutate(const std::vector<std::string>& inputs, uint64_t* s) {
  std::string x = inputs[Next(s) % inputs.size()];
  const int edits = 1 + static_cast<int>(Next(s) % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = x.empty() ? 0 : Next(s) % x.size();
    switch (Next(s) % 5) {
      case 0:  // flip a byte
        if (!x.empty()) x[at] = static_cast<char>(x[at] ^ (1 << (Next(s) % 8)));
        break;
      case 1:  // insert a byte
        x.insert(x.begin() + at, static_cast<char>(Next(s) & 0xff));
        break;
      case 2:  // delete a run
        if (!x.empty()) x.erase(at, 1 + Next(s) % 8);
        break;
      case 3: {  // splice in part of another input
        const std::string& o = inputs[Next(s) % inputs.size()];
        if (!o.empty()) {
          const size_t from = Next(s) % o.size();
          x.insert(at, o.substr(from, 1 + Next(s) % 32));
        }
        break;
      }
      default:  // an interesting value
        static const char* const kTokens[] = {
            "nan", "-inf", "1e39", "&a", "*a",
            "{",   "[",    "\xff", "-0", "999999999999"};
        x.insert(at, kTokens[Next(s) % 10]);
        break;
    }
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  long mutations = 0;
  const std::vector<std::string> inputs = ReadInputs(argc, argv, &mutations);
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s [--mutations=N] FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  for (const std::string& in : inputs) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()),
                           in.size());
  }
  uint64_t seed = 2026;
  for (long i = 0; i < mutations; ++i) {
    const std::string x = Mutate(inputs, &seed);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(x.data()),
                           x.size());
  }
  std::printf("%zu seeds and %ld mutations ran\n", inputs.size(), mutations);
  return 0;
}
