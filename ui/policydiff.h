#pragma once

#include "core/model/egresspolicy.h"

#include <QCoreApplication>
#include <QList>

namespace airlock {

/// One difference between the applied policy and the edited one.
struct PolicyChange
{
    enum class Kind { Added, Removed, Changed };
    Kind kind = Kind::Added;
    int beforeIndex = -1; ///< 0-based rule index in the applied policy (-1 for Added)
    int afterIndex = -1; ///< 0-based rule index in the edited policy (-1 for Removed)
    EgressRule before;
    EgressRule after;
};

/// The pending changes of the policy editor: rules only in the edited policy (Added), only in
/// the applied one (Removed), and rules of the same host whose other fields differ (Changed).
/// Equal rules are matched in order (longest common subsequence), so moving a rule shows as a
/// removal and an addition of the same host, i.e. a Changed entry with equal fields.
class PolicyDiff final
{
    Q_DECLARE_TR_FUNCTIONS(PolicyDiff)
public:
    static QList<PolicyChange> compute(const EgressPolicy &applied, const EgressPolicy &edited);
    /// One line for a person: "+ api.github.com  ports 443  GET, HEAD", "− ...", or
    /// "~ api.github.com: methods GET → GET, POST".
    static QString describe(const PolicyChange &change);
    /// A rule's fields in one line: "api.github.com  ports 443  methods GET  paths /a".
    static QString ruleSummary(const EgressRule &rule);
};

} // namespace airlock
