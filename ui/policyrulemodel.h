#pragma once

#include "core/model/egresspolicy.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

class QUndoStack;

namespace airlock {

/// One rule as the person typed it: every cell is text, so a half-typed rule can be shown with
/// its problem instead of being refused. `EgressRule` is built from it (PolicyRuleModel::policy).
struct RuleDraft
{
    QString host;
    QString ports = QStringLiteral("443"); ///< "443, 8443"
    QString methods; ///< "GET, HEAD"; empty = any method
    QString paths; ///< "/simple/ /packages/"; empty = any path
    QString comment;

    /// The cells of `rule` (canonical host, ports joined with ", ").
    static RuleDraft fromRule(const EgressRule &rule);

    friend bool operator==(const RuleDraft &, const RuleDraft &) = default;
};

/// A problem the helper reported for the policy (policy.validate's PolicyError).
struct HelperPolicyError
{
    int rule = -1; ///< 0-based, -1 for the policy as a whole
    QString field; ///< "host", "ports", ... or empty
    QString message; ///< the helper's English text
};

/// The rules of the policy editor as an editable table: Host, Ports, Methods, Path prefixes,
/// Comment, and a Problem column that says in words what is wrong with the row. Validation
/// uses the gateway's own canonicalization (canonicalHostPattern, isValidRuleMethod,
/// pathPrefixProblem, EgressRule::validate). Every change (cell edits, added and removed rules)
/// goes through an undo stack. Problems the helper reported are shown in the row they concern
/// until that row is edited.
class PolicyRuleModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        HostColumn,
        PortsColumn,
        MethodsColumn,
        PathsColumn,
        CommentColumn,
        ProblemColumn,
        ColumnCount
    };
    enum Role {
        ProblemRole = Qt::UserRole + 1, ///< QString: the problem of this cell (or row, column 5)
    };

    explicit PolicyRuleModel(QObject *parent = nullptr);
    ~PolicyRuleModel() override;

    QUndoStack *undoStack() const { return m_undo; }

    /// Replaces every row with `policy` and clears the undo history and helper errors.
    void setPolicy(const EgressPolicy &policy);
    /// The policy built from the rows, or InvalidParams "rule N: problem" for the first row
    /// with a problem (N 1-based, as shown in the table).
    Result<EgressPolicy> policy() const;
    /// Rule of `row` when its cells are valid.
    std::optional<EgressRule> ruleAt(int row) const;
    const RuleDraft &draftAt(int row) const { return m_rows.at(row); }
    /// The first problem of `row` (cells in column order, then the helper's), or empty.
    QString rowProblem(int row) const;
    /// The problem of one cell, or empty.
    QString cellProblem(int row, int column) const;
    /// Rows that have a problem.
    int problemCount() const;

    /// Appends rules (one undo step). Returns the first new row.
    int addRules(const QList<EgressRule> &rules, const QString &undoText);
    /// Appends an empty rule for the person to fill in (one undo step).
    int addEmptyRule();
    /// Removes `rows` (one undo step).
    void removeRules(QList<int> rows);
    /// Shows the helper's problems next to the rules they name; replaces earlier ones.
    void setHelperErrors(const QList<HelperPolicyError> &errors);
    /// Problems the helper reported for the policy as a whole.
    QStringList policyLevelErrors() const { return m_policyErrors; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Used by the undo commands only.
    void applyCell(int row, int column, const QString &text);
    void applyInsert(int row, const QList<RuleDraft> &drafts);
    void applyRemove(int row, int count);

Q_SIGNALS:
    /// Rows or cells changed (also by undo/redo).
    void rulesChanged();

private:
    QList<RuleDraft> m_rows;
    QHash<int, QString> m_helperErrors; // row -> message
    QStringList m_policyErrors;
    QUndoStack *m_undo;
};

} // namespace airlock
