#include "ui/policyrulemodel.h"

#include "core/model/hostname.h"
#include "ui/policytext.h"

#include <QBrush>
#include <QColor>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>

namespace airlock {

namespace {

class SetCellCommand final : public QUndoCommand
{
public:
    SetCellCommand(PolicyRuleModel *model, int row, int column, QString before, QString after)
        : m_model(model)
        , m_row(row)
        , m_column(column)
        , m_before(std::move(before))
        , m_after(std::move(after))
    {
        setText(PolicyRuleModel::tr("edit rule %1").arg(row + 1));
    }
    void undo() override { m_model->applyCell(m_row, m_column, m_before); }
    void redo() override { m_model->applyCell(m_row, m_column, m_after); }

private:
    PolicyRuleModel *m_model;
    int m_row;
    int m_column;
    QString m_before;
    QString m_after;
};

class InsertRulesCommand final : public QUndoCommand
{
public:
    InsertRulesCommand(PolicyRuleModel *model, int row, QList<RuleDraft> drafts,
                       const QString &text)
        : m_model(model), m_row(row), m_drafts(std::move(drafts))
    {
        setText(text);
    }
    void undo() override { m_model->applyRemove(m_row, int(m_drafts.size())); }
    void redo() override { m_model->applyInsert(m_row, m_drafts); }

private:
    PolicyRuleModel *m_model;
    int m_row;
    QList<RuleDraft> m_drafts;
};

class RemoveRuleCommand final : public QUndoCommand
{
public:
    RemoveRuleCommand(PolicyRuleModel *model, int row, QUndoCommand *parent)
        : QUndoCommand(parent), m_model(model), m_row(row), m_draft(model->draftAt(row))
    { }
    void undo() override { m_model->applyInsert(m_row, {m_draft}); }
    void redo() override { m_model->applyRemove(m_row, 1); }

private:
    PolicyRuleModel *m_model;
    int m_row;
    RuleDraft m_draft;
};

QString cellText(const RuleDraft &draft, int column)
{
    switch (column) {
    case PolicyRuleModel::HostColumn:
        return draft.host;
    case PolicyRuleModel::PortsColumn:
        return draft.ports;
    case PolicyRuleModel::MethodsColumn:
        return draft.methods;
    case PolicyRuleModel::PathsColumn:
        return draft.paths;
    case PolicyRuleModel::CommentColumn:
        return draft.comment;
    default:
        return {};
    }
}

} // namespace

RuleDraft RuleDraft::fromRule(const EgressRule &rule)
{
    QStringList ports;
    for (quint16 port : rule.ports)
        ports.append(QString::number(port));
    return {rule.host, joinListCell(ports), joinListCell(rule.methods),
            joinListCell(rule.pathPrefixes), rule.comment};
}

PolicyRuleModel::PolicyRuleModel(QObject *parent)
    : QAbstractTableModel(parent), m_undo(new QUndoStack(this))
{ }

PolicyRuleModel::~PolicyRuleModel()
{
    // Commands point at this model; drop them before the rows go.
    m_undo->clear();
}

void PolicyRuleModel::setPolicy(const EgressPolicy &policy)
{
    beginResetModel();
    m_rows.clear();
    for (const EgressRule &rule : policy.rules)
        m_rows.append(RuleDraft::fromRule(rule));
    m_helperErrors.clear();
    m_policyErrors.clear();
    endResetModel();
    m_undo->clear();
    Q_EMIT rulesChanged();
}

QString PolicyRuleModel::cellProblem(int row, int column) const
{
    if (row < 0 || row >= m_rows.size())
        return {};
    const RuleDraft &draft = m_rows.at(row);
    switch (column) {
    case HostColumn:
        return PolicyText::hostPatternProblem(draft.host.trimmed());
    case PortsColumn:
        return PolicyText::portsProblem(draft.ports);
    case MethodsColumn:
        return PolicyText::methodsProblem(splitListCell(draft.methods));
    case PathsColumn:
        return PolicyText::pathPrefixesProblem(splitListCell(draft.paths));
    case CommentColumn:
        return draft.comment.size() > 1024 ? tr("A comment may have at most 1024 characters.")
                                           : QString();
    default:
        return {};
    }
}

std::optional<EgressRule> PolicyRuleModel::ruleAt(int row) const
{
    if (row < 0 || row >= m_rows.size())
        return std::nullopt;
    for (int column = HostColumn; column <= CommentColumn; ++column) {
        if (!cellProblem(row, column).isEmpty())
            return std::nullopt;
    }
    const RuleDraft &draft = m_rows.at(row);
    EgressRule rule;
    rule.host = *canonicalHostPattern(draft.host.trimmed());
    PolicyText::portsProblem(draft.ports, &rule.ports);
    rule.methods = splitListCell(draft.methods);
    rule.pathPrefixes = splitListCell(draft.paths);
    rule.comment = draft.comment;
    // The model's own checks mirror EgressRule's; validate() is the last word.
    if (!rule.validate())
        return std::nullopt;
    return rule;
}

QString PolicyRuleModel::rowProblem(int row) const
{
    for (int column = HostColumn; column <= CommentColumn; ++column) {
        const QString problem = cellProblem(row, column);
        if (!problem.isEmpty())
            return problem;
    }
    if (!ruleAt(row))
        return tr("The rule is not valid.");
    return m_helperErrors.value(row);
}

int PolicyRuleModel::problemCount() const
{
    int count = 0;
    for (int row = 0; row < m_rows.size(); ++row)
        count += rowProblem(row).isEmpty() ? 0 : 1;
    return count;
}

Result<EgressPolicy> PolicyRuleModel::policy() const
{
    EgressPolicy policy;
    for (int row = 0; row < m_rows.size(); ++row) {
        auto rule = ruleAt(row);
        if (!rule)
            return fail(ErrorKind::InvalidParams,
                        tr("rule %1: %2").arg(row + 1).arg(rowProblem(row)));
        policy.rules.append(*rule);
    }
    AIRLOCK_TRY(policy.validate());
    return policy;
}

int PolicyRuleModel::addRules(const QList<EgressRule> &rules, const QString &undoText)
{
    QList<RuleDraft> drafts;
    for (const EgressRule &rule : rules)
        drafts.append(RuleDraft::fromRule(rule));
    const int row = int(m_rows.size());
    if (!drafts.isEmpty())
        m_undo->push(new InsertRulesCommand(this, row, drafts, undoText));
    return row;
}

int PolicyRuleModel::addEmptyRule()
{
    const int row = int(m_rows.size());
    m_undo->push(new InsertRulesCommand(this, row, {RuleDraft {}}, tr("add rule")));
    return row;
}

void PolicyRuleModel::removeRules(QList<int> rows)
{
    std::sort(rows.begin(), rows.end(), std::greater<int>());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    if (rows.isEmpty())
        return;
    auto *command = new QUndoCommand(rows.size() == 1 ? tr("remove rule %1").arg(rows.first() + 1)
                                                      : tr("remove %n rules", "", rows.size()));
    // Highest row first, so the lower indices stay valid while the children run.
    for (int row : rows)
        new RemoveRuleCommand(this, row, command);
    m_undo->push(command);
}

void PolicyRuleModel::setHelperErrors(const QList<HelperPolicyError> &errors)
{
    m_helperErrors.clear();
    m_policyErrors.clear();
    for (const HelperPolicyError &error : errors) {
        if (error.rule >= 0 && error.rule < m_rows.size())
            m_helperErrors.insert(error.rule, error.message);
        else
            m_policyErrors.append(error.message);
    }
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void PolicyRuleModel::applyCell(int row, int column, const QString &text)
{
    RuleDraft &draft = m_rows[row];
    switch (column) {
    case HostColumn:
        draft.host = text;
        break;
    case PortsColumn:
        draft.ports = text;
        break;
    case MethodsColumn:
        draft.methods = text;
        break;
    case PathsColumn:
        draft.paths = text;
        break;
    case CommentColumn:
        draft.comment = text;
        break;
    default:
        return;
    }
    m_helperErrors.remove(row);
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    Q_EMIT rulesChanged();
}

void PolicyRuleModel::applyInsert(int row, const QList<RuleDraft> &drafts)
{
    beginInsertRows({}, row, row + int(drafts.size()) - 1);
    for (qsizetype i = 0; i < drafts.size(); ++i)
        m_rows.insert(row + i, drafts.at(i));
    // Row numbers moved; the helper's errors would point at the wrong rules.
    m_helperErrors.clear();
    endInsertRows();
    Q_EMIT rulesChanged();
}

void PolicyRuleModel::applyRemove(int row, int count)
{
    beginRemoveRows({}, row, row + count - 1);
    m_rows.remove(row, count);
    m_helperErrors.clear();
    endRemoveRows();
    Q_EMIT rulesChanged();
}

int PolicyRuleModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PolicyRuleModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PolicyRuleModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const int row = index.row();
    const int column = index.column();
    const RuleDraft &draft = m_rows.at(row);
    const QString problem = column == ProblemColumn ? rowProblem(row) : cellProblem(row, column);
    switch (role) {
    case Qt::DisplayRole:
        if (column == ProblemColumn)
            return problem.isEmpty() ? tr("OK") : problem;
        if (column == MethodsColumn && draft.methods.trimmed().isEmpty())
            return tr("any");
        if (column == PathsColumn && draft.paths.trimmed().isEmpty())
            return tr("any");
        return cellText(draft, column);
    case Qt::EditRole:
        return cellText(draft, column);
    case Qt::ToolTipRole:
        if (!problem.isEmpty())
            return problem;
        if (column == HostColumn) {
            auto canonical = canonicalHostPattern(draft.host.trimmed());
            if (canonical && *canonical != draft.host)
                return tr("Stored as %1").arg(*canonical);
        }
        return {};
    case Qt::ForegroundRole:
        if (column == ProblemColumn && !problem.isEmpty())
            return QBrush(QColor(0xb0, 0x20, 0x20));
        if (column == ProblemColumn)
            return QBrush(QColor(0x2e, 0x7d, 0x32));
        return {};
    case Qt::BackgroundRole:
        if (column != ProblemColumn && !problem.isEmpty())
            return QBrush(QColor(0xfd, 0xe0, 0xe0));
        return {};
    case ProblemRole:
        return problem;
    default:
        return {};
    }
}

bool PolicyRuleModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid)
        || index.column() >= ProblemColumn)
        return false;
    const QString before = cellText(m_rows.at(index.row()), index.column());
    const QString after = value.toString();
    if (before == after)
        return true;
    m_undo->push(new SetCellCommand(this, index.row(), index.column(), before, after));
    return true;
}

Qt::ItemFlags PolicyRuleModel::flags(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() != ProblemColumn)
        flags |= Qt::ItemIsEditable;
    return flags;
}

QVariant PolicyRuleModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section + 1;
    switch (section) {
    case HostColumn:
        return tr("Host");
    case PortsColumn:
        return tr("Ports");
    case MethodsColumn:
        return tr("Methods");
    case PathsColumn:
        return tr("Path prefixes");
    case CommentColumn:
        return tr("Comment");
    case ProblemColumn:
        return tr("Problem");
    default:
        return {};
    }
}

} // namespace airlock
