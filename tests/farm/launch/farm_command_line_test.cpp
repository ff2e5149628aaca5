// The one command line of a launched worker or relay (farm/launch/farm_command_line.h), as ssh,
// srun and farm render's local workers give it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "launch/farm_command_line.h"

TEST_SUITE_BEGIN("unit");

using Words = std::vector<std::string>;

TEST_CASE("farm command line: a launched worker carries its keys' flag, one give-up time and what is known") {
  farm::FarmCommandLine worker;
  worker.connect = "tcp://relay:5555";
  CHECK(worker.words("/opt/farm") ==
        Words{"/opt/farm", "worker", "--launched", "--once", "--connect", "tcp://relay:5555", "--give-up-after", "60"});
  worker.name = "node 1";
  worker.threads = 8;
  worker.cache_dir = "/scratch/farm cache";
  worker.fallback = "tcp://master:5555";
  CHECK(worker.words("farm") == Words{"farm", "worker", "--launched", "--once", "--connect", "tcp://relay:5555",
                                      "--name", "node 1", "--give-up-after", "60", "--threads", "8", "--cache",
                                      "/scratch/farm cache", "--fallback", "tcp://master:5555"});
}

TEST_CASE("farm command line: a relay binds its site's endpoint, a local worker has no keys and may go unconfined") {
  farm::FarmCommandLine relay;
  relay.role = farm::FarmCommandLine::Role::relay;
  relay.connect = "tcp://master:5555";
  relay.bind = "tcp://*:0";
  relay.name = "labA";
  CHECK(relay.words("farm") == Words{"farm", "relay", "--launched", "--once", "--connect", "tcp://master:5555",
                                     "--bind", "tcp://*:0", "--name", "labA", "--give-up-after", "60"});
  farm::FarmCommandLine local;
  local.launched = false;
  local.connect = "tcp://127.0.0.1:4000";
  local.name = "local-1";
  local.prefetch = 0;
  local.no_sandbox = true;
  CHECK(local.words("farm") == Words{"farm", "worker", "--once", "--connect", "tcp://127.0.0.1:4000", "--name",
                                     "local-1", "--give-up-after", "60", "--prefetch", "0", "--no-sandbox"});
}

TEST_CASE("farm command line: for a remote shell, plain words stay plain and every other word is quoted whole") {
  CHECK(farm::remote_shell_command({"/opt/farm", "worker", "--connect", "tcp://10.0.0.1:5555"}) ==
        "exec /opt/farm worker --connect tcp://10.0.0.1:5555");
  CHECK(farm::remote_shell_command({"farm", "--name", "a b", "--cache", "/x;rm -rf ~", "it's", ""}) ==
        "exec farm --name 'a b' --cache '/x;rm -rf ~' 'it'\\''s' ''");
  CHECK(farm::remote_shell_command({"$(id)", "`id`", "a*b", "~"}) == "exec '$(id)' '`id`' 'a*b' '~'");
}
