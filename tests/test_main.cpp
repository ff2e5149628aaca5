// The main of every doctest executable. A test whose tool or files are missing says
// MESSAGE("skipped: WHY") and returns; when nothing failed, the run then exits with
// k_skip_exit_code, which CTest reports as skipped (SKIP_RETURN_CODE, tests/labeled_tests.cmake),
// not passed. A failure always wins over a skip: a run that both skips and fails exits 1.
// (CTest's SKIP_REGULAR_EXPRESSION would not do: a match is reported as skipped even when the
// run failed, which hides failures in a test that runs several cases.)
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>

namespace {

constexpr int k_skip_exit_code = 77;  // the autotools convention; tests/labeled_tests.cmake says it too
constexpr const char* k_skip_prefix = "skipped: ";
int skip_count = 0;

// Listens to every MESSAGE and counts the skips.
struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData& message) override {
    if (std::strncmp(message.m_string.c_str(), k_skip_prefix, std::strlen(k_skip_prefix)) == 0) ++skip_count;
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("skips", 1, SkipListener);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (context.shouldExit() || status != 0) return status;
  return skip_count > 0 ? k_skip_exit_code : 0;
}
