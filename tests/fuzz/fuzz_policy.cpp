// libFuzzer target: policy files and host names (docs/policy.md; docs/redteam-cases.md
// principle 2 and class C).
// Checks the canonicalization's promises: canonical names are fixed points, a loaded policy
// round-trips through its JSON form unchanged, and the matcher accepts every valid policy.
#include "core/model/egresspolicy.h"
#include "core/model/hostname.h"
#include "core/policy/policymatcher.h"

#include <cstdint>
#include <cstdlib>

using namespace airlock;
using namespace airlock::policy;

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));

    // As a host name: canonical output is ASCII, lower case, and canonical again.
    const QString asName = QString::fromUtf8(bytes);
    if (auto canonical = canonicalHostname(asName)) {
        check(*canonical == canonical->toLower());
        check(!canonical->endsWith(QLatin1Char('.')));
        auto again = canonicalHostname(*canonical);
        check(again && *again == *canonical);
        check(!PolicyMatcher::hostMatches(QStringLiteral("*.") + *canonical, *canonical));
    }

    // As a policy file.
    auto policy = EgressPolicy::fromJsonBytes(bytes);
    if (!policy)
        return 0;
    check(policy->validate().has_value());
    auto reloaded = EgressPolicy::fromJsonBytes(policy->toJsonBytes());
    check(reloaded && *reloaded == *policy);
    auto matcher = PolicyMatcher::create(*policy);
    check(matcher.has_value());
    for (const EgressRule &rule : policy->rules) {
        if (!rule.isWildcard())
            check(matcher->checkConnection(rule.host, rule.ports.first()).allowed());
    }
    return 0;
}
